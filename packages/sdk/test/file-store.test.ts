/**
 * Session stores: MemorySessionStore and the atomic FileSessionStore (write temp + fsync +
 * rename + directory fsync), including a write that fails half-way.
 */
import { randomUUID } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeviceIdentity, RatchetSession, utf8Decode, utf8Encode } from '../src/crypto/index.js';
import { FileSessionStore } from '../src/node/index.js';
import { MemorySessionStore, type SessionStore } from '../src/storage.js';
import { BIND } from './ratchet-fixtures.js';

const faults = vi.hoisted(() => ({ failRename: false, failWrite: false }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (from: string, to: string) => {
      if (faults.failRename) throw Object.assign(new Error('simulated crash before rename'), { code: 'EIO' });
      return actual.rename(from, to);
    },
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      if (!faults.failWrite) return handle;
      // a handle whose write stops half-way, as a full disk or a crash would
      return Object.assign(Object.create(handle), {
        writeFile: async (data: string) => {
          await handle.writeFile(data.slice(0, Math.floor(data.length / 2)));
          throw Object.assign(new Error('simulated ENOSPC'), { code: 'ENOSPC' });
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      });
    },
  };
});

let dir: string;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'parley-store-'));
  faults.failRename = false;
  faults.failWrite = false;
});

afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function contract(store: SessionStore) {
  expect(await store.load('a')).toBeUndefined();
  await store.save('a', 'one');
  expect(await store.load('a')).toBe('one');
  await store.save('a', 'two');
  expect(await store.load('a')).toBe('two');
  await store.save('b', '');
  expect(await store.load('b')).toBe('');
  await store.delete('a');
  expect(await store.load('a')).toBeUndefined();
  await store.delete('a'); // deleting nothing is fine
  expect(await store.load('b')).toBe('');
}

describe('MemorySessionStore', () => {
  it('keeps the SessionStore contract', async () => {
    await contract(new MemorySessionStore());
  });
});

describe('FileSessionStore', () => {
  it('keeps the SessionStore contract', async () => {
    await contract(new FileSessionStore(path.join(dir, 'sessions')));
  });

  it('creates its directory 0700 and files 0600, and leaves no temporary file', async () => {
    const root = path.join(dir, 'nested', 'sessions');
    const store = new FileSessionStore(root);
    const id = randomUUID();
    await store.save(id, '{"v":1}');
    expect(await fsp.readdir(root)).toEqual([`${id}.json`]);
    expect(await fsp.readFile(path.join(root, `${id}.json`), 'utf8')).toBe('{"v":1}');
    if (process.platform !== 'win32') {
      expect((await fsp.stat(root)).mode & 0o777).toBe(0o700);
      expect((await fsp.stat(path.join(root, `${id}.json`))).mode & 0o777).toBe(0o600);
    }
  });

  it('maps any id to a file inside its directory, without collisions', async () => {
    const store = new FileSessionStore(dir);
    const ids = ['../escape', '..', '.', 'a/b', 'a\\b', 'peer:device', 'ünïcødé', '~abc', 'abc', 'a b'];
    for (const id of ids) await store.save(id, `state of ${id}`);
    for (const id of ids) expect(await store.load(id)).toBe(`state of ${id}`);
    for (const id of ids) expect(path.dirname(store.fileFor(id))).toBe(dir);
    expect(new Set(ids.map((id) => store.fileFor(id))).size).toBe(ids.length);
    expect(await fsp.readdir(dir)).toHaveLength(ids.length);
    expect(() => store.fileFor('')).toThrow(TypeError);
    expect(() => store.fileFor('é'.repeat(200))).toThrow(TypeError);
  });

  it('applies concurrent saves of one id in call order', async () => {
    const store = new FileSessionStore(dir, { fsync: false });
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.save('s', `state ${i}`)));
    expect(await store.load('s')).toBe('state 29');
    const [, , loaded] = await Promise.all([store.save('s', 'x'), store.delete('s'), store.load('s')]);
    expect(loaded).toBeUndefined();
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it('a save that fails before the rename leaves the previous state whole and no temp file', async () => {
    const store = new FileSessionStore(dir);
    await store.save('s', 'previous state');
    faults.failRename = true;
    await expect(store.save('s', 'next state')).rejects.toThrow(/simulated crash/);
    faults.failRename = false;
    expect(await store.load('s')).toBe('previous state');
    expect(await fsp.readdir(dir)).toEqual(['s.json']);
  });

  it('a write torn half-way never reaches the state file', async () => {
    const store = new FileSessionStore(dir);
    await store.save('s', 'previous state');
    faults.failWrite = true;
    await expect(store.save('s', 'x'.repeat(10_000))).rejects.toThrow(/ENOSPC/);
    faults.failWrite = false;
    expect(await store.load('s')).toBe('previous state');
    expect(await fsp.readdir(dir)).toEqual(['s.json']);
  });

  it('a temporary file left by a crash is ignored', async () => {
    const store = new FileSessionStore(dir);
    await store.save('s', 'good');
    await fsp.writeFile(path.join(dir, 's.json.0123456789abcdef.tmp'), '{"torn');
    expect(await store.load('s')).toBe('good');
    await store.save('s', 'better');
    expect(await store.load('s')).toBe('better');
  });

  it('persists ratchet sessions across a restart', async () => {
    const aliceId = DeviceIdentity.generate(randomUUID());
    const bobId = DeviceIdentity.generate(randomUUID());
    const aliceStore = new FileSessionStore(path.join(dir, 'alice'));
    const bobStore = new FileSessionStore(path.join(dir, 'bob'));
    const alice = RatchetSession.initiate(aliceId, { device_id: bobId.deviceId!, ...bobId.publicKeys }, BIND);
    const first = alice.encrypt(utf8Encode('hello'));
    await aliceStore.save(bobId.deviceId!, alice.serialize());
    const { session: bob } = RatchetSession.respond(bobId, first, aliceId.identityPublicKeyHex, BIND);
    await bobStore.save(aliceId.deviceId!, bob.serialize());

    // "restart": fresh store objects, sessions restored from disk
    const bob2 = RatchetSession.fromJSON((await new FileSessionStore(path.join(dir, 'bob')).load(aliceId.deviceId!))!, bobId);
    const alice2 = RatchetSession.fromJSON((await new FileSessionStore(path.join(dir, 'alice')).load(bobId.deviceId!))!, aliceId);
    expect(utf8Decode(alice2.decrypt(bob2.encrypt(utf8Encode('hi'))))).toBe('hi');
    expect(utf8Decode(bob2.decrypt(alice2.encrypt(utf8Encode('again'))))).toBe('again');
  });
});
