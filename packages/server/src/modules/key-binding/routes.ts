/** Key-binding route (docs/decisions.md "Key bindings"). Thin: rules live in service.ts. */
import { ROUTES } from '@parley/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { serve } from '../../http/contract.js';
import type { KeyBindingService } from './service.js';

export const keyBindingRoutes: FastifyPluginAsync<{ keyBinding: KeyBindingService }> = async (app, { keyBinding }) => {
  serve(app, ROUTES.keyBindingNonce, async (req, reply) => reply.status(201).send(await keyBinding.issueNonce(req.principal, req.body)));
};
