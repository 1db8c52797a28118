/**
 * Blob store (design §1 `src/storage/`, contract §2.5): opaque bytes by key, on the local filesystem
 * (default, under `DATA_DIR/blobs`) or in S3-compatible object storage (when `S3_BUCKET` is set).
 * Keys are `<tenant_id>/<blob_id>`; the service stores client-encrypted bytes only and never
 * inspects them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../config.js';

type S3Sdk = typeof import('@aws-sdk/client-s3');
/** The AWS SDK, loaded when an S3 store is made: about 1 MB of code the embedded default never runs (cold start). */
let s3Sdk: Promise<S3Sdk> | undefined;

/** Opaque byte storage by key. Keys are `/`-separated segments of `[A-Za-z0-9_-]` (e.g. `<tenant_id>/<blob_id>`). */
export interface BlobStore {
  /** Store `bytes` under `key`, replacing any previous value. Resolves once the bytes are durable. */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes under `key`, or undefined when there are none. */
  get(key: string): Promise<Buffer | undefined>;
  /** Remove `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

/** The storage key of a blob: `<tenant_id>/<blob_id>`. */
export function blobKey(tenantId: string, blobId: string): string {
  return `${tenantId}/${blobId}`;
}

function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`invalid blob key "${key}"`);
  return key;
}

/** Blob store on the local filesystem: one file per key under `dir`, written atomically (temp file + rename). */
export class FilesystemBlobStore implements BlobStore {
  /** @param dir root directory (created on first write). */
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, ...checkKey(key).split('/'));
  }

  /** Write to a temporary file in the target directory, fsync, then rename over the key's file. */
  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.file(key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fs.open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  /** The file's bytes, or undefined when it does not exist. */
  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Remove the file (no error when it is missing). */
  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }
}

/** Blob store in an S3-compatible bucket: one object per key. */
export class S3BlobStore implements BlobStore {
  /** The SDK and the client, once the SDK has loaded. */
  private readonly s3: Promise<{ sdk: S3Sdk; client: S3Client }>;
  private readonly bucket: string;

  /** Path-style addressing is used when `config.endpoint` is set (MinIO, s3rver, …). */
  constructor(config: S3Config) {
    this.bucket = config.bucket;
    this.s3 = (s3Sdk ??= import('@aws-sdk/client-s3')).then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        region: config.region,
        ...(config.endpoint ? { endpoint: config.endpoint, forcePathStyle: true } : {}),
        ...(config.accessKeyId && config.secretAccessKey
          ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
          : {}),
      }),
    }));
    this.s3.catch(() => undefined); // the first operation reports it
  }

  /** PUT the object (S3 writes are atomic per object). */
  async put(key: string, bytes: Buffer): Promise<void> {
    const { sdk, client } = await this.s3;
    await client.send(
      new sdk.PutObjectCommand({ Bucket: this.bucket, Key: checkKey(key), Body: bytes, ContentType: 'application/octet-stream', ContentLength: bytes.length }),
    );
  }

  /** GET the object; undefined when the key does not exist. */
  async get(key: string): Promise<Buffer | undefined> {
    const { sdk, client } = await this.s3;
    try {
      const res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      if (!res.Body) return Buffer.alloc(0);
      return Buffer.from(await res.Body.transformToByteArray());
    } catch (err) {
      if (err instanceof sdk.NoSuchKey) return undefined;
      if (err instanceof sdk.S3ServiceException && err.$metadata.httpStatusCode === 404) return undefined;
      throw err;
    }
  }

  /** DELETE the object (S3 answers success for a missing key). */
  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.s3;
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
  }

  /** Release the client's sockets. */
  close(): void {
    void this.s3.then(({ client }) => client.destroy(), () => undefined);
  }
}
