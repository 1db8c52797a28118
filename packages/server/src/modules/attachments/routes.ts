/**
 * Attachment routes (contract §4.7, design §8.5): upload a raw `application/octet-stream` body or a
 * `multipart/form-data` body whose single `file` part is the encrypted file; download the same
 * raw bytes. Owner JWT or device JWT of the same tenant.
 */
import multipart from '@fastify/multipart';
import { ATTACHMENT_CONTENT_TYPE, ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { tenantOf } from '../../http/auth.js';
import { serve } from '../../http/contract.js';
import { AppError, ErrorCode, badRequest } from '../../lib/errors.js';
import type { AttachmentService } from './service.js';

/**
 * The uploaded bytes of a multipart request: exactly one part, a file field named `file`, at most
 * `maxBytes` (413 beyond it, 400 for a missing or differently named part).
 */
async function multipartFile(req: FastifyRequest, maxBytes: number): Promise<Buffer> {
  let part;
  try {
    part = await req.file({ limits: { fileSize: maxBytes, files: 1, fields: 0, parts: 1 } });
  } catch (err) {
    throw badRequest(`malformed multipart body: ${(err as Error).message}`);
  }
  if (!part || part.fieldname !== 'file') throw badRequest('the multipart body needs one file part named "file"');
  try {
    return await part.toBuffer();
  } catch (err) {
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new AppError(ErrorCode.PayloadTooLarge, `attachment is larger than ${maxBytes} bytes`);
    throw badRequest(`malformed multipart body: ${(err as Error).message}`);
  }
}

/** Registers the attachment routes and, in their scope, the `application/octet-stream` and multipart body parsers. */
export const attachmentRoutes: FastifyPluginAsync<{ attachments: AttachmentService; maxBytes: number }> = async (app, { attachments, maxBytes }) => {
  app.addContentTypeParser(ATTACHMENT_CONTENT_TYPE, { parseAs: 'buffer', bodyLimit: maxBytes }, (_req, body, done) => done(null, body));
  await app.register(multipart, { limits: { fileSize: maxBytes, files: 1 } });

  serve(
    app,
    ROUTES.uploadAttachment,
    async (req, reply) => {
      const body: unknown = req.isMultipart() ? await multipartFile(req, maxBytes) : req.body;
      if (body === undefined || body === null) throw badRequest('the request body is the encrypted file (application/octet-stream)');
      if (!Buffer.isBuffer(body)) throw new AppError(ErrorCode.UnsupportedMediaType, `upload the encrypted file as ${ATTACHMENT_CONTENT_TYPE}`);
      const principal = req.principal!;
      const tenantId = tenantOf(req);
      return reply.status(201).send(await attachments.upload({ ...principal, tenantId }, body));
    },
    { bodyLimit: maxBytes, summary: `${ROUTES.uploadAttachment.summary} (at most ${maxBytes} bytes)` },
  );

  serve(app, ROUTES.downloadAttachment, async (req, reply) => {
    const { bytes } = await attachments.download(tenantOf(req), req.params.blob_id.toLowerCase());
    return reply.header('content-type', ATTACHMENT_CONTENT_TYPE).header('content-length', bytes.length).send(bytes);
  });
};
