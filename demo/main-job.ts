/**
 * `npm run demo`: Parley's main job end to end, in one command, on an embedded server it starts
 * itself (PGlite in memory, 127.0.0.1 on a free port):
 *
 *   owner tenant → owner device → invite → the agent enrolls (the `parley-agent` code) → the owner
 *   sees `device_pending`, compares fingerprints and approves → the agent activates →
 *   end-to-end encrypted messages both ways (MLS by default, `--no-mls` for X3DH + Double Ratchet)
 *   → a decision_request from the agent answered by the owner, the answer decrypted by the agent
 *   → a decision_request from the owner auto-answered by the agent → the owner revokes the agent,
 *   which sees its socket closed with 4001 and exits
 *
 * and finally checks that the server's database holds no plaintext of anything said: every
 * bytea / text / json column of every table is searched for the UTF-8 of every plaintext (the
 * search is shown to work by finding the tenant name, which is stored in clear). Exits 1 when a
 * plaintext is found or a step fails. `runMainJob` is exported for the test that runs it in CI.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../packages/server/src/app.js';
import { loadConfig, type Config } from '../packages/server/src/config.js';
import { ParleyApiError } from '../packages/sdk/src/client/errors.js';
import { ParleyClient } from '../packages/sdk/src/client/rest.js';
import type { Content, DecisionRequest } from '../packages/sdk/src/content/types.js';
import { DeviceIdentity } from '../packages/sdk/src/crypto/keys.js';
import { describeMessage, enrollAgentDevice, startEchoAgent, type AgentExit, type EchoAgent } from '../packages/sdk/src/node/agent.js';
import { KeyFileSource } from '../packages/sdk/src/node/sealing-keys.js';
import { nodeWebSocket } from '../packages/sdk/src/node/ws.js';
import { RealtimeClient } from '../packages/sdk/src/realtime/client.js';
import { decisionAnswer, readDecisionAnswer } from '../packages/sdk/src/secure/decisions.js';
import { SecureMessenger } from '../packages/sdk/src/secure/messenger.js';
import { ownerPeerResolver, restTransport } from '../packages/sdk/src/secure/transport.js';
import type { SecureMessage } from '../packages/sdk/src/secure/types.js';
import { MemorySessionStore } from '../packages/sdk/src/storage.js';
import { scanForPlaintext, type Leak } from './db-scan.js';

/** Options of {@link runMainJob}. */
export interface MainJobOptions {
  /** Print nothing (the transcript is still returned). Default false. */
  quiet?: boolean;
  /** MLS when both sides support it (default true); false: X3DH + Double Ratchet. */
  mls?: boolean;
  /** Where transcript lines go when not quiet (default console.log). */
  print?: (line: string) => void;
  /** Most time one step may wait, in ms (default 20 000). */
  stepTimeoutMs?: number;
}

/** What {@link runMainJob} found. `ok` is true only when every step passed and nothing leaked. */
export interface MainJobResult {
  ok: boolean;
  /** The first failure, when not ok. */
  error?: string;
  /** Protocol of the owner–agent session (contract §1.3). */
  protocol?: 'mls' | 'x3dh-dr';
  /** The fingerprint the agent printed and the one the owner saw in `device_pending`. */
  fingerprints?: { agent: string; owner: string };
  /** Plaintexts received: by the agent from the owner, and by the owner from the agent. */
  agentReceived: string[];
  ownerReceived: string[];
  /** How the agent ended (expected: revoked, close 4001). */
  agentExit?: AgentExit;
  /** The revoked agent's next API call status (expected 403). */
  revokedApiStatus?: number;
  /** The database search (contract §1.2). */
  scan?: { columns: number; messageRows: number; needles: number; leaks: Leak[]; sanityFound: boolean };
  transcript: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class StepError extends Error {}

/** Run the main job (see the file comment). Never throws: failures are in the result. */
export async function runMainJob(options: MainJobOptions = {}): Promise<MainJobResult> {
  const mls = options.mls ?? true;
  const print = options.print ?? ((line: string) => console.log(line));
  const timeoutMs = options.stepTimeoutMs ?? 20_000;
  const transcript: string[] = [];
  const say = (who: string, line: string) => {
    const text = `${who.padEnd(7)} ${line}`;
    transcript.push(text);
    if (!options.quiet) print(text);
  };
  const waitFor = async <T>(get: () => T | undefined | false, what: string): Promise<T> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = get();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > end) throw new StepError(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new StepError(what);
  };

  const tag = randomBytes(3).toString('hex'); // marks every plaintext, so the search has no false positives
  const result: MainJobResult = { ok: false, agentReceived: [], ownerReceived: [], transcript };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-demo-'));
  const cleanup: (() => unknown)[] = [];
  const plaintexts = new Set<string>();
  const record = (m: SecureMessage) => plaintexts.add(Buffer.from(m.plaintext).toString('utf8'));

  try {
    // ---------------------------------------------------------------- the service
    const config: Config = {
      ...loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_DEVICE_STATUS_PER_5S: '100' }),
      pgliteInMemory: true,
    };
    const app = await buildApp(config);
    cleanup.push(() => app.close());
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const server = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    say('[setup]', `embedded Parley server on ${server} (PGlite in memory), MLS ${mls ? 'on' : 'off'}`);

    // ---------------------------------------------------------------- the owner
    const ownerJwt = await app.parley.devIdp!.mint('alice@example.com');
    const owner = new ParleyClient({ baseUrl: server, ownerToken: ownerJwt });
    const tenantName = `Acme Robotics ${tag}`;
    const tenant = await owner.createTenant({ name: tenantName });
    say('[owner]', `tenant "${tenant.name}" created; alice is ${tenant.role}`);
    const ownerKeys = DeviceIdentity.generate();
    const ownerDevice = await owner.registerOwnerDevice({ ...ownerKeys.publicKeys, name: 'alice-laptop', platform: 'demo' });
    owner.setOwnerDeviceId(ownerDevice.device_id);
    const ownerIdentity = ownerKeys.withDeviceId(ownerDevice.device_id);
    say('[owner]', `owner device registered (${ownerDevice.device_id}), fingerprint ${ownerDevice.fingerprint}`);

    const ownerMessenger = await SecureMessenger.open({
      identity: ownerIdentity,
      store: new MemorySessionStore(),
      client: owner,
      mls,
      resolvePeer: ownerPeerResolver(owner, ownerDevice.device_id),
      transport: restTransport(owner, ownerDevice.device_id),
    });
    const ownerReceived: SecureMessage[] = [];
    ownerMessenger.on('message', (m) => {
      record(m);
      ownerReceived.push(m);
      say('[owner]', `← ${describeMessage(m)} (decrypted, ${m.protocol})`);
    });
    ownerMessenger.on('error', (e) => say('[owner]', `warning: ${e.code}: ${e.message}`));
    const events: { event: string; data: Record<string, unknown> }[] = [];
    const ownerRt = new RealtimeClient({ url: server, token: ownerJwt, deviceId: ownerDevice.device_id, WebSocket: nodeWebSocket() });
    cleanup.push(() => ownerRt.close());
    ownerRt.on('event', (e) => events.push({ event: e.event, data: (e.data ?? {}) as Record<string, unknown> }));
    ownerMessenger.attach(ownerRt, { transport: false });
    await ownerMessenger.start();
    await ownerRt.connect();
    say('[owner]', 'online (WebSocket), waiting for agents');

    const invite = await owner.createInvite({ label: 'echo agent' });
    say('[owner]', `invite ${invite.token.slice(0, 16)}… created (single use, expires ${invite.expires_at})`);

    // ---------------------------------------------------------------- enrollment (the parley-agent code)
    const stateDir = path.join(dataDir, 'agent-state');
    // Sealed at rest under a key file beside the state directory (created on first use).
    const protection = new KeyFileSource(path.join(dataDir, 'agent.key'));
    let agentFingerprint: string | undefined;
    const enrolling = enrollAgentDevice({
      server,
      invite: invite.token,
      stateDir,
      protection,
      name: 'echo-agent',
      log: (l) => say('[agent]', l),
      onEnrolled: (e) => (agentFingerprint = e.fingerprint),
      pollIntervalMs: 200,
      unsafeFastPolling: true, // the demo server allows it; the command keeps contract §8's 5 s
      fsync: false,
    });
    enrolling.catch(() => undefined);
    const pending = await waitFor(() => events.find((e) => e.event === 'device_pending')?.data, 'device_pending');
    const agentId = String(pending.device_id);
    const ownerSees = String(pending.fingerprint);
    const agentShows = await waitFor(() => agentFingerprint, "the agent's fingerprint");
    result.fingerprints = { agent: agentShows, owner: ownerSees };
    say('[owner]', `device_pending: "${String(pending.name)}" (${String(pending.platform)}) fingerprint ${ownerSees}`);
    check(ownerSees === agentShows, `fingerprint mismatch: the agent shows ${agentShows}, the owner sees ${ownerSees}`);
    say('[owner]', 'the fingerprint matches what the agent shows: approving');
    await owner.approveDevice(agentId);
    const activated = await enrolling;
    const linked = await waitFor(() => events.find((e) => e.event === 'device_linked')?.data, 'device_linked');
    const conversationId = String(linked.conversation_id);
    check(activated.conversations?.some((c) => c.conversation_id === conversationId) === true, 'the activation answer lacks the linked conversation');
    say('[owner]', `device_linked: agent ${agentId} is ACTIVE, conversation ${conversationId}`);

    // ---------------------------------------------------------------- the agent runs (the parley-agent code)
    const agent: EchoAgent = await startEchoAgent({ stateDir, protection, mls, log: (l) => say('[agent]', l), fsync: false });
    cleanup.push(() => agent.stop());
    const agentReceived: SecureMessage[] = [];
    agent.messenger.on('message', (m) => {
      record(m);
      agentReceived.push(m);
    });
    await agent.ready; // connected; its MLS KeyPackages were published before it connected

    const agentKeysSeenByOwner = await owner.conversationKeys(conversationId);
    check(agentKeysSeenByOwner.fingerprint === agentShows, 'the conversation keys do not carry the approved fingerprint');
    await ownerMessenger.addConversation(conversationId, agentKeysSeenByOwner);

    // ---------------------------------------------------------------- E2E messages both ways
    const send = async (who: 'owner' | 'agent', content: Content) => {
      const messenger = who === 'owner' ? ownerMessenger : agent.messenger;
      const sent = await messenger.send(conversationId, content);
      say(`[${who}]`, `→ ${describeContent(content)} (encrypted, ${sent.protocol})`);
      return sent;
    };
    const hello = `Hello agent, are you there? [${tag}]`;
    const first = await send('owner', { type: 'text', payload: { text: hello } });
    result.protocol = first.protocol;
    await waitFor(() => ownerReceived.find((m) => m.content?.type === 'text' && m.content.payload.text === `echo: ${hello}`), 'the echo');

    const request: DecisionRequest = {
      title: `Deploy release 1.4 to production? [${tag}]`,
      description: `All 312 checks passed; the change touches billing. [${tag}]`,
      options: [
        { option_id: 'deploy', label: `Deploy now [${tag}]`, risk_level: 'medium' },
        { option_id: 'wait', label: `Wait until Monday [${tag}]`, risk_level: 'low', is_default: true },
      ],
    };
    const asked = await send('agent', { type: 'decision_request', payload: request });
    const received = await waitFor(() => ownerReceived.find((m) => m.message_id === asked.message_id), "the owner's copy of the decision request");
    check(received.content?.type === 'decision_request', 'the owner could not read the decision request');
    await send('owner', decisionAnswer(request, received.message_id, 'deploy'));
    const answer = await waitFor(() => agentReceived.map((m) => readDecisionAnswer(m.content)).find((a) => a?.in_reply_to === asked.message_id), "the agent's copy of the answer");
    check(answer.option_id === 'deploy', `the agent read option ${answer.option_id}, not "deploy"`);
    say('[check]', `the agent decrypted the owner's decision: ${answer.option_id}`);

    const question: DecisionRequest = {
      title: `Rotate the staging API keys tonight? [${tag}]`,
      options: [
        { option_id: 'rotate', label: `Rotate [${tag}]`, risk_level: 'low', is_default: true },
        { option_id: 'skip', label: `Skip [${tag}]`, risk_level: 'high' },
      ],
    };
    const asked2 = await send('owner', { type: 'decision_request', payload: question });
    const auto = await waitFor(() => ownerReceived.map((m) => readDecisionAnswer(m.content)).find((a) => a?.in_reply_to === asked2.message_id), "the agent's answer");
    check(auto.option_id === 'rotate', `the agent chose ${auto.option_id}, not the default "rotate"`);

    const ownerSession = ownerMessenger.sessionInfo(conversationId);
    const agentSession = agent.messenger.sessionInfo(conversationId);
    check(ownerSession !== undefined && ownerSession.session_id === agentSession?.session_id, 'owner and agent do not share one session');
    check(ownerSession!.protocol === (mls ? 'mls' : 'x3dh-dr'), `the session uses ${ownerSession!.protocol}`);
    say('[check]', `one ${ownerSession!.protocol} session on both ends (${ownerSession!.session_id.slice(0, 24)}…)`);

    // ---------------------------------------------------------------- revocation
    await owner.revokeDevice(agentId);
    say('[owner]', `revoked the agent ${agentId}`);
    const exit = await Promise.race([agent.done, sleep(timeoutMs).then(() => undefined)]);
    check(exit !== undefined, 'the agent did not see its revocation');
    result.agentExit = exit!;
    say('[agent]', `socket closed by the service with ${exit!.code} (${exit!.reason}); the agent exits`);
    check(exit!.reason === 'revoked' && exit!.code === 4001, `the agent ended with ${exit!.reason} ${exit!.code ?? ''}, not revoked 4001`);
    try {
      await agent.client.devicePending(agentId);
    } catch (err) {
      if (err instanceof ParleyApiError) result.revokedApiStatus = err.status;
    }
    say('[check]', `the revoked agent's next API call answers ${result.revokedApiStatus ?? 'success (!)'}`);
    check(result.revokedApiStatus === 403, 'a revoked device could still call the API');

    result.agentReceived = agentReceived.map((m) => describeMessage(m));
    result.ownerReceived = ownerReceived.map((m) => describeMessage(m));
    ownerRt.close();
    await ownerMessenger.close();

    // ---------------------------------------------------------------- zero knowledge (contract §1.2)
    const needles = new Set<string>();
    for (const p of plaintexts) {
      needles.add(p);
      collectTagged(JSON.parse(p), tag, needles);
    }
    const scan = await scanForPlaintext(app.parley.database, [...needles]);
    const sanity = await scanForPlaintext(app.parley.database, [tenantName]);
    const sanityFound = sanity.leaks.some((l) => l.table.endsWith('.tenants'));
    result.scan = { columns: scan.columns.length, messageRows: scan.messageRows, needles: needles.size, leaks: scan.leaks, sanityFound };
    const tables = new Set(scan.columns.map((c) => c.split('.').slice(0, 2).join('.')));
    say('[check]', `searched ${scan.columns.length} columns of ${tables.size} tables (messages: ${scan.messageRows} rows) for ${needles.size} plaintexts`);
    say('[check]', `search sanity: the tenant name (stored in clear) is ${sanityFound ? 'found' : 'NOT found'} in ${sanity.leaks.map((l) => `${l.table}.${l.column}`).join(', ') || 'no column'}`);
    check(sanityFound, 'the database search cannot find a value that is stored in clear');
    check(scan.messageRows >= 6, `only ${scan.messageRows} messages stored`);
    for (const leak of scan.leaks) say('[check]', `PLAINTEXT FOUND in ${leak.table}.${leak.column} (${leak.rows} rows): ${leak.needle.slice(0, 60)}`);
    check(scan.leaks.length === 0, `${scan.leaks.length} plaintext(s) found in the database`);
    say('[check]', 'no plaintext of anything said is in the database');
    result.ok = true;
  } catch (err) {
    result.error = err instanceof StepError ? err.message : ((err as Error)?.stack ?? String(err));
    say('[error]', result.error);
  } finally {
    for (const c of cleanup.reverse()) await Promise.resolve().then(c).catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  say('[result]', result.ok ? 'OK: the main job ran end to end and the server never held a plaintext' : 'FAILED');
  return result;
}

/** One line for content being sent. */
function describeContent(content: Content): string {
  switch (content.type) {
    case 'text':
      return `text "${content.payload.text}"`;
    case 'decision_request':
      return `decision_request "${content.payload.title}"`;
    case 'action_confirmation': {
      const a = readDecisionAnswer(content);
      return a ? `decision answer: ${a.option_id}` : `action_confirmation ${content.payload.action}`;
    }
    default:
      return content.type;
  }
}

/** Every string inside `value` that carries the demo's tag. */
function collectTagged(value: unknown, tag: string, out: Set<string>): void {
  if (typeof value === 'string') {
    if (value.includes(tag)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectTagged(v, tag, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) collectTagged(v, tag, out);
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return fs.realpathSync(script) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  const mlsFlag = !process.argv.includes('--no-mls');
  void runMainJob({ mls: mlsFlag }).then((r) => {
    process.stdout.write('', () => process.exit(r.ok ? 0 : 1));
  });
}
