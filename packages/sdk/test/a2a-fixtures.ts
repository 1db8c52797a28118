/**
 * Fixtures of the A2A-through-the-plugin tests: an official `@a2a-js/sdk` server (express) on
 * loopback standing for an agent's own A2A server, and the official client pointed at a plugin.
 */
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { AgentCard, Message, TaskState, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { eq } from 'drizzle-orm';
import express from 'express';
import { expect } from 'vitest';
import { A2A_PARLEY_ERRORS } from '../src/node/a2a-errors.js';
import { schema, type TestApp } from '@parley/server/testing';
import type { ParleyClient } from '../src/client/rest.js';
import { bytesToBase64, ed25519Keygen, type KeyPair } from '../src/crypto/primitives.js';
import { startPlugin, type RunningPlugin } from '../src/node/plugin.js';
import { startApiKeyAgent, type AgentRuntime } from '../src/node/runtime.js';
const { hubIdentities } = schema;

/** The text of a message's first part. */
export const text = (m: Message | undefined) => (m?.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : undefined);
/** A user message of one text part. */
export const userMessage = (t: string): Message => Message.fromJSON({ messageId: randomBytes(8).toString('hex'), role: 'ROLE_USER', parts: [{ text: t }] });
/** A `SendMessage` request of one text part. */
export const sendRequest = (t: string, returnImmediately = false) => ({ message: userMessage(t), configuration: { returnImmediately, acceptedOutputModes: [] } }) as unknown as SendMessageRequest;

/** What an upstream saw: texts in order, `traceparent` headers, requests closed before their answer ended. */
export interface UpstreamLog {
  heard: string[];
  traceparents: string[];
  aborted: number;
}

/** The upstream agent: `echo` answers with a message; `stream N` a task with N working updates; `wait` a task that runs until canceled. */
function upstreamExecutor(log: UpstreamLog): AgentExecutor {
  const running = new Map<string, () => void>();
  const agentMessage = (taskId: string, contextId: string, t: string) => Message.fromJSON({ messageId: randomBytes(8).toString('hex'), role: 'ROLE_AGENT', taskId, contextId, parts: [{ text: t }] });
  const status = (taskId: string, contextId: string, state: TaskState, t?: string) =>
    AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: t ? agentMessage(taskId, contextId, t) : undefined, timestamp: new Date().toISOString() }, metadata: undefined });
  return {
    async execute(ctx, bus) {
      const said = text(ctx.userMessage) ?? '';
      log.heard.push(said);
      const task = (state: TaskState): Task => ({ id: ctx.taskId, contextId: ctx.contextId, status: { state, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [ctx.userMessage], metadata: undefined });
      const stream = /^stream (\d+)/.exec(said);
      if (stream) {
        bus.publish(AgentEvent.task(task(TaskState.TASK_STATE_SUBMITTED)));
        for (let i = 1; i <= Number(stream[1]); i++) bus.publish(status(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_WORKING, `chunk ${i}`));
        bus.publish(status(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_COMPLETED, 'done'));
      } else if (said.startsWith('wait')) {
        bus.publish(AgentEvent.task(task(TaskState.TASK_STATE_WORKING)));
        await new Promise<void>((resolve) => running.set(ctx.taskId, resolve)); // runs until cancelTask
        return;
      } else {
        bus.publish(AgentEvent.message(agentMessage(ctx.taskId, ctx.contextId, `echo: ${said}`)));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      running.get(taskId)?.();
      running.delete(taskId);
      bus.publish(status(taskId, 'ctx', TaskState.TASK_STATE_CANCELED, 'canceled'));
      bus.finished();
    },
  };
}

/** Start the official A2A server on a loopback port; `log` records what it saw. */
export async function startUpstream(): Promise<{ url: string; server: Server; log: UpstreamLog }> {
  const log: UpstreamLog = { heard: [], traceparents: [], aborted: 0 };
  const card = AgentCard.fromJSON({
    name: 'upstream',
    description: 'test upstream',
    version: '1.0.0',
    supportedInterfaces: [{ url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), upstreamExecutor(log));
  const app = express();
  app.use((req, res, next) => {
    if (typeof req.headers.traceparent === 'string') log.traceparents.push(req.headers.traceparent);
    res.on('close', () => void (res.writableEnded || log.aborted++));
    next();
  });
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server, log };
}

/** The official client, built from the card the plugin at `pluginUrl` serves for `address`, sending the plugin token. */
export async function officialClient(pluginUrl: string, pluginToken: string, address: string): Promise<Client> {
  const authed: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${pluginToken}` } });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authed })], cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed }) }));
  return factory.createFromUrl(`${pluginUrl}/a2a/${address}/`);
}

/** The JSON-RPC error a call fails with (the official client's error carries code and message). */
export async function rpcError(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as { envelopeCode?: number; errorResponse?: { error: { code: number } }; message: string } | undefined;
  expect(err, 'the call fails').toBeDefined();
  return { code: err!.envelopeCode ?? err!.errorResponse?.error.code ?? NaN, message: err!.message };
}

/** An agent of the plugin tests: its API-key runtime, its local plugin, its hub address and that identity's registration key. */
export interface PluginAgent {
  rt: AgentRuntime;
  plugin: RunningPlugin;
  address: string;
  /** The identity's registration (owner) key. */
  key: KeyPair;
  /** The agent's state directory. */
  dir: string;
}

/** How {@link PluginAgents.start} starts an agent. */
export interface PluginAgentOptions {
  /** Trust tier of its hub identity (default `certified`), set as an operator's grant would. */
  tier?: string;
  /** Trust score of its hub identity (default 0.9). */
  trustScore?: number;
  /** The agent's own A2A server: calls arriving on its channels are answered from there. */
  a2aUpstream?: string;
}

/** Starts API-key agents with their plugins (state in temporary directories) and stops them all on `close()`. */
export class PluginAgents {
  private readonly stops: (() => Promise<unknown>)[] = [];
  private readonly dirs: string[] = [];

  /** `db`: a service instance whose database takes the trust tiers (any instance of a cluster). */
  constructor(private readonly db: TestApp) {}

  /**
   * Start an agent of `owner`'s tenant connected to the service at `server` (http base URL): an API
   * key, its runtime (plain state store) and plugin (port 0; A2A answer timeout 4 s, key exchange
   * wait 3 s), and a hub identity `a2a-{name}-{random}` bound to its device.
   */
  async start(owner: ParleyClient, server: string, name: string, opts: PluginAgentOptions = {}): Promise<PluginAgent> {
    const { key } = await owner.createApiKey({ name });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-a2a-${name}-`));
    this.dirs.push(dir);
    const rt = await startApiKeyAgent({ apiKey: key, server, stateDir: dir, protection: 'plain', fsync: false, log: () => undefined });
    this.stops.push(() => rt.stop());
    await rt.ready;
    const plugin = await startPlugin({ backend: rt, stateDir: dir, port: 0, fsync: false, a2a: { answerTimeoutMs: 4000, openTimeoutMs: 3000 }, ...(opts.a2aUpstream ? { a2aUpstream: opts.a2aUpstream } : {}) });
    this.stops.push(() => plugin.close());
    const address = `a2a-${name}-${randomBytes(4).toString('hex')}`;
    const idKey = ed25519Keygen();
    await owner.registerHub({ hub_address: address, display_name: `Agent ${name}`, device_id: rt.deviceId, public_key: bytesToBase64(idKey.publicKey) });
    await this.db.app.parley.database.db
      .update(hubIdentities)
      .set({ trustTier: opts.tier ?? 'certified', trustScore: opts.trustScore ?? 0.9 })
      .where(eq(hubIdentities.hubAddress, address));
    return { rt, plugin, address, key: idKey, dir };
  }

  /** Stop every agent (plugins before runtimes, latest first) and remove their state directories. */
  async close(): Promise<void> {
    for (const stop of this.stops.reverse()) await stop().catch(() => undefined);
    for (const d of this.dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

/**
 * Send a call that a hold policy stops: the JSON-RPC error is `policy_held` naming the held
 * message, and the upstream (whose texts are `heard`) did not get it. Answers the text and the id.
 */
export async function heldCall(client: Client, heard: readonly string[]): Promise<{ asked: string; heldId: string }> {
  const asked = `held call ${randomBytes(4).toString('hex')}`;
  const err = await rpcError(client.sendMessage(sendRequest(asked)));
  expect(err.code).toBe(A2A_PARLEY_ERRORS.policy_held);
  const heldId = /held message ([0-9a-f-]{36})/.exec(err.message)?.[1];
  expect(heldId).toBeDefined();
  expect(heard).not.toContain(asked);
  return { asked, heldId: heldId! };
}
