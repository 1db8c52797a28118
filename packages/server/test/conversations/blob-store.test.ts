/**
 * BlobStore contract (design §1 src/storage/): the same suite runs against the filesystem store
 * and against the S3 store backed by a local s3rver.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKey, FilesystemBlobStore, S3BlobStore, type BlobStore } from '../../src/storage/blob-store.js';

function contract(name: string, setup: () => Promise<{ store: BlobStore; teardown(): Promise<void> }>) {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ store, teardown } = await setup());
    });
    afterAll(() => teardown?.());

    it('round-trips bytes exactly', async () => {
      const key = blobKey(randomUUID(), randomUUID());
      const bytes = randomBytes(70_000);
      await store.put(key, bytes);
      expect(Buffer.compare((await store.get(key))!, bytes)).toBe(0);
    });

    it('answers undefined for a missing key', async () => {
      expect(await store.get(blobKey(randomUUID(), randomUUID()))).toBeUndefined();
    });

    it('replaces the value of an existing key', async () => {
      const key = blobKey(randomUUID(), randomUUID());
      await store.put(key, Buffer.from('first'));
      await store.put(key, Buffer.from('second'));
      expect((await store.get(key))!.toString()).toBe('second');
    });

    it('deletes, and deleting a missing key is not an error', async () => {
      const key = blobKey(randomUUID(), randomUUID());
      await store.put(key, Buffer.from([0, 1, 2, 255]));
      await store.delete(key);
      expect(await store.get(key)).toBeUndefined();
      await expect(store.delete(key)).resolves.toBeUndefined();
    });

    it('keeps keys of different tenants apart', async () => {
      const blob = randomUUID();
      const a = blobKey(randomUUID(), blob);
      const b = blobKey(randomUUID(), blob);
      await store.put(a, Buffer.from('a'));
      expect(await store.get(b)).toBeUndefined();
    });

    it('refuses keys that could escape the namespace', async () => {
      await expect(store.put('../etc/passwd', Buffer.from('x'))).rejects.toThrow(/invalid blob key/);
      await expect(store.get('a//b')).rejects.toThrow(/invalid blob key/);
    });
  });
}

contract('filesystem', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-blobs-'));
  return {
    store: new FilesystemBlobStore(dir),
    teardown: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

contract('S3 (s3rver)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-s3rver-'));
  const bucket = 'parley-test';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const store = new S3BlobStore({
    bucket,
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  });
  return {
    store,
    teardown: async () => {
      store.close();
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('FilesystemBlobStore', () => {
  it('writes atomically: no temporary file is left behind', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-blobs-'));
    try {
      const store = new FilesystemBlobStore(dir);
      const tenant = randomUUID();
      await store.put(blobKey(tenant, 'x'), randomBytes(1000));
      expect(fs.readdirSync(path.join(dir, tenant))).toEqual(['x']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
