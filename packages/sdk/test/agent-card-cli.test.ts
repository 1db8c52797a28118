/**
 * `parley-agent card publish` and `run` publishing a stale card, in process against a real server:
 * an API-key agent registered by `hub-register`, started with `run` (which publishes its card once
 * its keys are registered), then `card publish` (current: nothing to do), and again after a
 * capability was registered (published with its description and input schema).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import { verifyAgentCard, hubCardVerifierOptions, SKILL_INPUT_SCHEMAS_EXTENSION } from '../src/a2a-card/index.js';
import { main, type CliIo } from '../src/node/agent-cli.js';
import { waitFor } from './wait.js';

describe('parley-agent card publish', () => {
  let t: TestApp;
  let dir: string;
  let ownerToken: string;
  let owner: ParleyClient;
  const address = `card-cli-${Date.now().toString(36)}`;
  const lines: string[] = [];
  let stopAgent: (() => void) | undefined;
  let running: Promise<number> | undefined;
  const io = (): CliIo => ({ out: (l) => void lines.push(l), err: (l) => void lines.push(l), onSignal: (h) => void (stopAgent = h), env: {} });
  const common = () => ['--state-dir', dir, '--insecure-plain-store', '--server', t.baseUrl];
  const storedCard = () =>
    new ParleyClient({ baseUrl: t.baseUrl }).getAgentCard(address).catch((err: unknown) => {
      if (err instanceof ParleyApiError && err.status === 404) return undefined;
      throw err;
    });

  beforeAll(async () => {
    t = await startApp({ listen: true });
    dir = await mkdtemp(path.join(tmpdir(), 'parley-card-'));
    ownerToken = await t.ownerToken(`card-cli-${Date.now()}@example.com`);
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken });
    owner.setTenantId((await owner.createTenant({ name: 'Card Co' })).tenant_id);
    expect(await main(['hub-register', '--hub-address', address, '--display-name', 'Card agent', '--description', 'Answers cards', '--owner-token', ownerToken, '--capability', 'summarize', ...common()], io())).toBe(0);
  });

  afterAll(async () => {
    stopAgent?.();
    await running;
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('card publish before the agent ever ran says the keys are missing', async () => {
    expect(await main(['card', 'publish', ...common()], io())).toBe(1);
    expect(lines.at(-1)).toContain('holds no keys yet');
  });

  it('run publishes the card once the agent has keys; it verifies against did:hub', async () => {
    running = main(['run', ...common(), '--plugin-port', '0'], io());
    const card = await waitFor(storedCard, 'the card published by run', 20_000, 100);
    expect(card).toMatchObject({ name: 'Card agent', description: 'Answers cards', skills: [{ id: 'summarize' }] });
    expect(await verifyAgentCard(card, { expectedAddress: address, ...hubCardVerifierOptions(new ParleyClient({ baseUrl: t.baseUrl })) })).toMatchObject({ ok: true, kid: `did:hub:${address}#owner-key` });
    await waitFor(() => lines.some((l) => l.includes('published the Agent Card')), 'the run log line');
  });

  it('card publish leaves a current card alone, and republishes after a capability change', async () => {
    expect(await main(['card', 'publish', ...common()], io())).toBe(0);
    expect(lines.at(-1)).toContain('is current');

    await owner.registerHubCapability(address, { name: 'translate', version: '1.0.0', description: 'Translate text', input_schema: { type: 'object', properties: { text: { type: 'string' } } } });
    expect(await main(['card', 'publish', '--owner-token', ownerToken, ...common()], io())).toBe(0);
    expect(lines.at(-1)).toContain('published the Agent Card');
    const card = (await storedCard()) as unknown as { skills: { id: string; description: string }[]; capabilities: { extensions: { uri: string; params: { skills: Record<string, unknown> } }[] } };
    expect(card.skills.map((s) => [s.id, s.description])).toEqual([
      ['translate', 'Translate text'],
      ['summarize', 'summarize'],
    ]);
    expect(card.capabilities.extensions).toContainEqual(expect.objectContaining({ uri: SKILL_INPUT_SCHEMAS_EXTENSION, params: { skills: { translate: { type: 'object', properties: { text: { type: 'string' } } } } } }));
  });
});
