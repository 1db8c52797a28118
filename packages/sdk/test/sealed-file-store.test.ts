/**
 * Keys at rest (docs/architecture.md "Keys at rest"): the agent's state directory sealed under a
 * key file or a passphrase — no identity secret or undelivered plaintext in its bytes, a wrong
 * key refused with a message naming the key source, an older sealed copy of a record refused as
 * a rollback, plain storage only when chosen, and a plain directory sealed as it is read.
 */
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeviceIdentity } from '../src/crypto/index.js';
import { main } from '../src/node/agent-cli.js';
import { IDENTITY_KEY, loadAgentState } from '../src/node/agent.js';
import { PluginInbox } from '../src/node/inbox.js';
import {
  chooseStoreProtection,
  DEFAULT_SCRYPT,
  FileSessionStore,
  KeyFileSource,
  MANIFEST_FILE,
  openStateStore,
  PassphraseSource,
  SealedFileSessionStore,
  SealedStoreError,
  type SealingKeySource,
  type StateStore,
} from '../src/node/index.js';
import type { PluginMessage } from '../src/node/plugin-api.js';

/** A cheap scrypt cost for tests (the default is exercised once). */
const CHEAP = { N: 2 ** 12, r: 8, p: 1 };
const SECRET_TEXT = 'the launch code is 0000-swordfish';

let root: string;
let dir: string;
beforeEach(async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'parley-sealed-'));
  dir = path.join(root, 'agent-state');
});
afterEach(async () => {
  await fsp.rm(root, { recursive: true, force: true });
});

const keyFile = () => new KeyFileSource(path.join(root, 'agent.key'));
const passphrase = (p = 'correct horse battery staple') => new PassphraseSource(p, { cost: CHEAP });

function inboxMessage(text: string): PluginMessage {
  return { message_id: 'm-1', channel_id: null, conversation_id: 'c-1', sender_device_id: 'd-1', sender_hub_address: null, text, content_type: 'text', content: { type: 'text', payload: { text } }, message_type: 'content', protocol: 'ratchet', timestamp: new Date().toISOString(), traceparent: null };
}

/** Write what an agent keeps (identity keys, an undelivered message) into `store`; returns the secrets to look for. */
async function writeAgentState(store: StateStore): Promise<string[]> {
  const identity = DeviceIdentity.generate().withPqPrekey();
  await store.save(IDENTITY_KEY, JSON.stringify(identity));
  const inbox = await PluginInbox.open(store);
  await inbox.add(inboxMessage(SECRET_TEXT));
  const json = identity.toJSON();
  return [json.identity_secret_key, json.ephemeral_secret_key, Buffer.from(json.identity_secret_key, 'hex').toString('base64'), SECRET_TEXT];
}

/** Every byte of every file under `dir`, as latin1 text to search. */
async function allBytes(where: string): Promise<string> {
  const names = await fsp.readdir(where);
  const parts = await Promise.all(names.map((n) => fsp.readFile(path.join(where, n))));
  return Buffer.concat(parts).toString('latin1');
}

describe.each<[string, () => SealingKeySource]>([
  ['key file', keyFile],
  ['passphrase', () => passphrase()],
])('a state directory sealed with a %s', (_, source) => {
  it('holds no identity secret key and no undelivered plaintext, and reads back', async () => {
    const secrets = await writeAgentState(await openStateStore(dir, source()));
    const bytes = await allBytes(dir);
    for (const secret of secrets) expect(bytes).not.toContain(secret);
    expect(bytes).toContain('"parley_sealed":1');

    const reopened = await openStateStore(dir, source());
    expect((await loadAgentState(reopened)).identity).toBeDefined();
    const inbox = await PluginInbox.open(reopened);
    expect(inbox.page({ limit: 10 }).messages[0]!.text).toBe(SECRET_TEXT);
  });

  it('an older sealed copy of a record put back is refused as a rollback', async () => {
    const store = await openStateStore(dir, source());
    await store.save('session', 'state 1');
    const old = await fsp.readFile(store.fileFor('session'));
    await store.save('session', 'state 2');
    await fsp.writeFile(store.fileFor('session'), old);

    const reopened = await openStateStore(dir, source());
    await expect(reopened.load('session')).rejects.toMatchObject({ code: 'rollback', message: expect.stringContaining('older copy') });
  });
});

describe('wrong or missing keys', () => {
  it('a wrong key file is refused with an error naming the key file', async () => {
    await (await openStateStore(dir, keyFile())).save('x', 'secret');
    const other = path.join(root, 'other.key');
    await fsp.writeFile(other, Buffer.alloc(32, 7), { mode: 0o600 });
    const err = await openStateStore(dir, new KeyFileSource(other)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SealedStoreError);
    expect(err).toMatchObject({ code: 'wrong_key', message: expect.stringContaining(`key file ${other}`) });
  });

  it('a wrong passphrase is refused', async () => {
    await (await openStateStore(dir, passphrase())).save('x', 'secret');
    await expect(openStateStore(dir, passphrase('Tr0ub4dor&3'))).rejects.toMatchObject({ code: 'wrong_key', message: expect.stringContaining('PARLEY_PASSPHRASE') });
  });

  it('a sealed directory opened without its key names the key source it needs', async () => {
    await (await openStateStore(dir, keyFile())).save('x', 'secret');
    await expect(openStateStore(dir, 'plain')).rejects.toMatchObject({ code: 'sealed_store', message: expect.stringContaining('--key-file') });
    await expect(openStateStore(dir, passphrase())).rejects.toMatchObject({ code: 'sealed_store', message: expect.stringContaining('key-file') });
    await fsp.rm(path.join(root, 'agent.key'));
    await expect(openStateStore(dir, keyFile())).rejects.toMatchObject({ code: 'key_unavailable', message: expect.stringContaining('does not exist') });
  });

  it('a key file others may read is refused; a new one is created 0600 with 32 random bytes', async () => {
    await openStateStore(dir, keyFile());
    const file = path.join(root, 'agent.key');
    expect((await fsp.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fsp.readFile(file)).length).toBe(32);
    if (process.platform === 'win32') return;
    await fsp.chmod(file, 0o644);
    await expect(openStateStore(dir, keyFile())).rejects.toMatchObject({ code: 'key_unavailable', message: expect.stringContaining('chmod 600') });
  });

  it('the passphrase cost is recorded in the manifest (RFC 7914 scrypt, default N=2^17, r=8, p=1)', async () => {
    await (await openStateStore(dir, new PassphraseSource('pw'))).save('x', 'y');
    const manifest = JSON.parse(await fsp.readFile(path.join(dir, MANIFEST_FILE), 'utf8')) as { kdf: unknown; key_source: string };
    expect(manifest).toMatchObject({ key_source: 'passphrase', kdf: DEFAULT_SCRYPT });
  });
});

describe('tampering other than rollback', () => {
  it('a plain file in place of a sealed record, a record moved to another id, or a missing record is refused', async () => {
    const store = await openStateStore(dir, keyFile());
    await store.save('a', 'state a');
    await store.save('b', 'state b');
    await store.save('c', 'state c');
    await fsp.writeFile(store.fileFor('a'), '{"identity_secret_key":"00"}');
    await fsp.copyFile(store.fileFor('c'), store.fileFor('b'));
    await fsp.rm(store.fileFor('c'));
    const reopened = await openStateStore(dir, keyFile());
    await expect(reopened.load('a')).rejects.toMatchObject({ code: 'rollback' });
    await expect(reopened.load('b')).rejects.toMatchObject({ code: 'tampered' });
    await expect(reopened.load('c')).rejects.toMatchObject({ code: 'tampered', message: expect.stringContaining('missing') });
  });

  it('a copy of a deleted record put back is ignored', async () => {
    const store = await openStateStore(dir, keyFile());
    await store.save('gone', 'old');
    const copy = await fsp.readFile(store.fileFor('gone'));
    await store.delete('gone');
    await fsp.writeFile(store.fileFor('gone'), copy);
    expect(await (await openStateStore(dir, keyFile())).load('gone')).toBeUndefined();
  });

  it('a record written just before a crash that lost the manifest update is kept (it is newer)', async () => {
    const store = await openStateStore(dir, keyFile());
    await store.save('s', 'one');
    const manifest = await fsp.readFile(path.join(dir, MANIFEST_FILE));
    await store.save('s', 'two');
    await fsp.writeFile(path.join(dir, MANIFEST_FILE), manifest);
    expect(await (await openStateStore(dir, keyFile())).load('s')).toBe('two');
  });

  it('concurrent saves of many records all reach the manifest', async () => {
    const store = await openStateStore(dir, keyFile());
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.save(`r${i % 10}`, `v${i}`)));
    const reopened = await openStateStore(dir, keyFile());
    for (let i = 0; i < 10; i++) expect(await reopened.load(`r${i}`)).toBe(`v${30 + i}`);
  });
});

describe('plain storage and migration', () => {
  it('plain storage only when chosen: no choice is an error naming the choices', async () => {
    expect(() => chooseStoreProtection({ env: {} })).toThrow(/--key-file.*PARLEY_PASSPHRASE.*--insecure-plain-store/s);
    expect(chooseStoreProtection({ env: { PARLEY_STORE: 'plain' } })).toBe('plain');
    expect(chooseStoreProtection({ plain: true, env: {} })).toBe('plain');
    expect(chooseStoreProtection({ env: { PARLEY_KEY_FILE: '/k' } })).toBeInstanceOf(KeyFileSource);
    expect(chooseStoreProtection({ env: { PARLEY_PASSPHRASE: 'p' } })).toBeInstanceOf(PassphraseSource);
    expect(chooseStoreProtection({ keyFile: '/k', env: { PARLEY_STORE: 'plain' } })).toBeInstanceOf(KeyFileSource);
    expect(() => chooseStoreProtection({ env: { PARLEY_STORE: 'plain', PARLEY_PASSPHRASE: 'p' } })).toThrow(/choose one/);
    expect(() => chooseStoreProtection({ keyFile: '/k', plain: true, env: {} })).toThrow(/choose one/);

    const plain = await openStateStore(dir, 'plain');
    await plain.save('x', SECRET_TEXT);
    expect(await allBytes(dir)).toContain(SECRET_TEXT);
  });

  it('the agent command refuses to start without a key or an explicit plain choice', async () => {
    const saved = { ...process.env };
    for (const k of ['PARLEY_KEY_FILE', 'PARLEY_PASSPHRASE', 'PARLEY_STORE']) delete process.env[k];
    try {
      const lines: string[] = [];
      const io = { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(l) };
      expect(await main(['status', '--state-dir', dir], io)).toBe(2);
      expect(lines.join('\n')).toMatch(/needs a key: --key-file PATH/);
      expect(await main(['status', '--state-dir', dir, '--key-file', path.join(root, 'k'), '--insecure-plain-store'], io)).toBe(2);
    } finally {
      process.env = saved;
    }
  });

  it('a plain state directory is sealed record by record as it is read, and its old plain copies are then refused', async () => {
    const secrets = await writeAgentState(new FileSessionStore(dir, { fsync: false }));
    const plainIdentity = await fsp.readFile(path.join(dir, `${IDENTITY_KEY}.json`));
    expect(await allBytes(dir)).toContain(secrets[0]);

    const sealed = await SealedFileSessionStore.open(dir, keyFile());
    const { identity } = await loadAgentState(sealed);
    expect(identity?.toJSON().identity_secret_key).toBe(secrets[0]);
    expect((await PluginInbox.open(sealed)).page({ limit: 10 }).messages[0]!.text).toBe(SECRET_TEXT);
    const bytes = await allBytes(dir);
    for (const secret of secrets) expect(bytes).not.toContain(secret);

    await fsp.writeFile(path.join(dir, `${IDENTITY_KEY}.json`), plainIdentity);
    await expect((await openStateStore(dir, keyFile())).load(IDENTITY_KEY)).rejects.toMatchObject({ code: 'rollback' });
  });
});
