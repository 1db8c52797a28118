/**
 * The official `@a2a-js/sdk` sides of bench/a2a: the agent's own A2A server (express, JSON-RPC
 * binding and its Agent Card, an echo executor) on 127.0.0.1, the official client built from a
 * card, and the checked calls the bench times.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { AgentCard, Message, TaskState, type SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';

/** The text of a message's first part. */
const textOf = (m: Message | undefined) => (m?.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : undefined);
const message = (role: 'ROLE_USER' | 'ROLE_AGENT', t: string, ids: { taskId?: string; contextId?: string } = {}) =>
  Message.fromJSON({ messageId: randomBytes(8).toString('hex'), role, ...ids, parts: [{ text: t }] });
/** A `SendMessage` / `SendStreamingMessage` request of one text part, answered when complete. */
export const sendRequest = (t: string) => ({ message: message('ROLE_USER', t), configuration: { returnImmediately: false, acceptedOutputModes: [] } }) as unknown as SendMessageRequest;

/** The agent behind y: "stream N" answers a task, N working updates and the completed one; anything else an echo message. */
const executor: AgentExecutor = {
  async execute(ctx, bus) {
    const said = textOf(ctx.userMessage) ?? '';
    const { taskId, contextId } = ctx;
    const status = (state: TaskState, t: string) => AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: message('ROLE_AGENT', t, { taskId, contextId }), timestamp: new Date().toISOString() }, metadata: undefined });
    const stream = /^stream (\d+)/.exec(said);
    if (stream) {
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [ctx.userMessage], metadata: undefined }));
      for (let i = 1; i <= Number(stream[1]); i++) bus.publish(status(TaskState.TASK_STATE_WORKING, `chunk ${i}`));
      bus.publish(status(TaskState.TASK_STATE_COMPLETED, 'done'));
    } else {
      bus.publish(AgentEvent.message(message('ROLE_AGENT', `echo: ${said}`, { taskId, contextId })));
    }
    bus.finished();
  },
  async cancelTask() {},
};

/** The official A2A server (JSON-RPC and its card) on 127.0.0.1:0; `seen` is told when a request arrives and when its answer is written. */
export async function startUpstream(seen?: (what: 'in' | 'out') => void): Promise<{ url: string; card: AgentCard; server: Server }> {
  let url = '';
  const card = () =>
    AgentCard.fromJSON({
      name: 'bench upstream',
      description: 'echo',
      version: '1.0.0',
      supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
    });
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  const app = express();
  if (seen) {
    app.use((_req, res, next) => {
      seen('in');
      res.on('finish', () => seen('out'));
      next();
    });
  }
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card() }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, card: card(), server };
}

/** The official client built from the card at `baseUrl` (JSON-RPC transport), sending `token` as a bearer token when given. */
export function officialClient(baseUrl: string, token?: string): Promise<Client> {
  const fetchImpl: typeof fetch = token ? (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } }) : fetch;
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) }));
  return factory.createFromUrl(baseUrl);
}

/** One `SendMessage`; throws unless the answer is the echo of `said`. */
export async function sendChecked(client: Client, said: string): Promise<void> {
  const answer = await client.sendMessage(sendRequest(said));
  const got = 'messageId' in answer ? textOf(answer) : undefined;
  if (got !== `echo: ${said}`) throw new Error(`unexpected answer to "${said}": ${JSON.stringify(answer)}`);
}

/** One `SendStreamingMessage` "stream N" read to the end; throws unless it brought the task and N + 1 status updates. */
export async function streamChecked(client: Client, events: number): Promise<void> {
  let n = 0;
  for await (const _ of client.sendMessageStream(sendRequest(`stream ${events}`))) n++;
  if (n !== events + 2) throw new Error(`stream ${events}: ${n} events, expected ${events + 2}`);
}
