/**
 * Encrypted attachments (contract §4.9): blobs in S3 (`S3_*`) or under `DATA_DIR/blobs`. The
 * area's public surface; `close()` releases the S3 client.
 */
import path from 'node:path';
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { FilesystemBlobStore, S3BlobStore, type BlobStore } from '../../storage/blob-store.js';
import { attachmentRoutes } from './routes.js';
import { AttachmentService } from './service.js';

/** Attachments in the configured blob store. */
export function createAttachments(d: Pick<Platform, 'db' | 'config' | 'log'>): Area {
  const { config } = d;
  const blobs: BlobStore = config.s3 ? new S3BlobStore(config.s3) : new FilesystemBlobStore(path.join(config.dataDir, 'blobs'));
  const attachments = new AttachmentService({ db: d.db, blobs, maxBytes: config.limits.maxAttachmentBytes, log: d.log });
  return {
    async routes(app) {
      await app.register(attachmentRoutes, { prefix: API_PREFIX, attachments, maxBytes: config.limits.maxAttachmentBytes });
    },
    async close() {
      if (blobs instanceof S3BlobStore) blobs.close();
    },
  };
}
