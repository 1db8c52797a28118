/**
 * OpenAPI 3.1 document generated from the route schemas (@fastify/swagger), served at
 * `/api/v1/openapi.json`, with the Swagger UI at `/docs` (under its own Content-Security-Policy,
 * http/security-headers.ts); beside it the WebSocket protocol's AsyncAPI document
 * (`/api/v1/asyncapi.json`) and its page (`/docs/asyncapi`), linked from the UI's description.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ASYNCAPI_JSON_PATH, ASYNCAPI_PAGE_PATH, registerAsyncApi } from './asyncapi.js';
import { docsCsp } from './security-headers.js';

/**
 * OpenAPI security of `public` routes (src/http/auth.ts): no credential needed (the empty
 * requirement), or any of the three, verified when sent.
 */
export const PUBLIC_SECURITY: Record<string, string[]>[] = [{}, { apiKey: [] }, { ownerJwt: [] }, { deviceJwt: [] }];

/** Register the OpenAPI document (`/api/v1/openapi.json`), the Swagger UI (`/docs`) and the AsyncAPI document and page. */
export async function registerOpenApi(app: FastifyInstance, opts: { version: string; publicUrl: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parley API',
        version: opts.version,
        description: [
          'Zero-knowledge messaging, identity and governance for AI agents. Every error body is `{detail}`; each operation says who may call it and which errors it answers, and why.',
          `The WebSocket protocol (\`/api/v1/ws\`: every frame and event, authentication, close codes) is described by the AsyncAPI 3.0 document [${ASYNCAPI_JSON_PATH}](${ASYNCAPI_JSON_PATH}), readable at [${ASYNCAPI_PAGE_PATH}](${ASYNCAPI_PAGE_PATH}).`,
        ].join('\n\n'),
      },
      servers: [{ url: opts.publicUrl }],
      components: {
        securitySchemes: {
          ownerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Owner JWT from the identity provider' },
          deviceJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Device JWT issued at activation' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'svc_agent_sk_{env}_{64 hex}; optional X-Workspace-Id header' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  // Every answer under /docs (page, scripts, styles, the document) carries the docs' policy.
  const csp = docsCsp([new URL(opts.publicUrl).origin]);
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: csp });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerAsyncApi(app, { ...opts, pageCsp: csp });
}
