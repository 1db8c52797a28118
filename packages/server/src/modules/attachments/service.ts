/**
 * Encrypted attachments (contract §2.5, §4.7; design §8.5, §8.12). Clients encrypt files themselves;
 * the service stores the opaque bytes in the blob store under `<tenant_id>/<blob_id>` and the
 * metadata (size, uploader) in the `attachments` table. The blob is written before its row
 * commits and removed again when the insert fails, so a committed row always has its bytes.
 */
import { randomUUID } from 'node:crypto';
import { ATTACHMENT_CONTENT_TYPE, type AttachmentInfo } from '@parley/protocol';
import type { Principal } from '../../auth/authenticator.js';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { AppError, ErrorCode, badRequest, notFound } from '../../lib/errors.js';
import { blobKey, type BlobStore } from '../../storage/blob-store.js';
import * as repo from './repo.js';

export { ATTACHMENT_CONTENT_TYPE };

export class AttachmentService {
  constructor(private readonly deps: { db: Db; blobs: BlobStore; maxBytes: number; log?: { warn(obj: object, msg: string): void } }) {}

  /**
   * Store an encrypted file for the principal's tenant. 400 for an empty body, 413 over the
   * configured limit (normally refused earlier by the body parser).
   */
  async upload(principal: Principal & { tenantId: string }, bytes: Buffer): Promise<AttachmentInfo> {
    if (bytes.length === 0) throw badRequest('the attachment is empty');
    if (bytes.length > this.deps.maxBytes) throw new AppError(ErrorCode.PayloadTooLarge, `attachment exceeds ${this.deps.maxBytes} bytes`);
    const id = randomUUID();
    const storageKey = blobKey(principal.tenantId, id);
    await this.deps.blobs.put(storageKey, bytes);
    try {
      const row = await withTenant(this.deps.db, principal.tenantId, (tx) =>
        repo.insertAttachment(tx, {
          id,
          tenantId: principal.tenantId,
          sizeBytes: bytes.length,
          contentType: ATTACHMENT_CONTENT_TYPE,
          storageKey,
          uploadedByDevice: principal.kind === 'device' ? principal.deviceId : null,
          uploadedBySub: principal.kind === 'owner' ? principal.sub : null,
        }),
      );
      return { blob_id: row.id, size_bytes: row.sizeBytes, content_type: row.contentType, created_at: row.createdAt.toISOString() };
    } catch (err) {
      await this.deps.blobs.delete(storageKey).catch((e: unknown) => this.deps.log?.warn({ err: e, storageKey }, 'orphan blob not removed'));
      throw err;
    }
  }

  /** The bytes of an attachment of the tenant; 404 when it is unknown or belongs to another tenant. */
  async download(tenantId: string, blobId: string): Promise<{ bytes: Buffer; contentType: string }> {
    const row = await withTenant(this.deps.db, tenantId, (tx) => repo.getAttachment(tx, blobId));
    if (!row) throw notFound('attachment');
    const bytes = await this.deps.blobs.get(row.storageKey);
    if (!bytes) throw notFound('attachment content');
    return { bytes, contentType: row.contentType };
  }
}
