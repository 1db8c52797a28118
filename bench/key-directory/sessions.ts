/**
 * bench/key-directory, session set-up (design §8.39): the time for an owner device's
 * `SecureMessenger` to start a session with an agent device it never talked to and send it the
 * first message (`sendText`: the peer's keys from `GET /conversations/{id}/keys`, the claims, the
 * session's key agreement, the encryption, `POST /conversations/{id}/messages`), with key
 * transparency off (`keyTransparency: false`, the baseline) and on (the default: one key
 * directory lookup, `POST /key-directory/lookups`, and `verifyKeyLookups` of every key the session
 * is built on), for both protocols the messenger chooses from (contract §1.3):
 *
 *   x3dh  `mls: false`: PQXDH on the claimed PQ prekey and X3DH on the claimed signed and
 *         one-time prekeys; with key transparency, one lookup of four labels (device keys, PQ
 *         prekey, signed prekey, one-time prekey; one VRF proof, the device's);
 *   mls   the default: the claimed KeyPackage, a new group and its Welcome; with key transparency,
 *         one lookup of the device keys.
 *
 * Set-up: the real app (`startApp` of @parley/server/testing) listening on 127.0.0.1 on PGlite in
 * memory, LOG_LEVEL=silent, RATE_LIMITS=off; one owner with four owner devices (one per protocol
 * and key-transparency setting) and `peers + 1` agents, each enrolled and activated over HTTP
 * (a conversation with each owner device) and started once as the SDK's agent runtime starts its
 * messenger (`prekeys: true`, MLS on, a PQ prekey: it publishes its signed, one-time and PQ
 * prekeys and 4 KeyPackages instead of 10, which only shortens the set-up), then closed. The
 * first agent warms every messenger up (and the key-transparency ones pin the directory's keys);
 * it is not measured. For each further agent, the off and on messengers of a protocol send in
 * turn, the one going first alternating (A/B) so that both see the same drift. The service's
 * VRF cache holds every label (publish computes it), as on a running service.
 */
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '@parley/server/testing';
import { DeviceIdentity, MemorySessionStore, ParleyClient, SecureMessenger, ownerPeerResolver, restTransport } from '@parley/sdk';
import { msSince, quantiles, timed, type Quantiles } from './stats.js';

/** The protocols measured. */
export const PROTOCOLS = ['x3dh', 'mls'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** One protocol's first sends: without and with key transparency. */
export interface SetupResult {
  protocol: Protocol;
  off: Quantiles;
  on: Quantiles;
  /** Protocol the sessions were actually started in (as the messenger reported it). */
  seen: string;
  /** Key transparency on: lookups per set-up, and their round trips' time per set-up (HTTP and the service's answer). */
  lookups: number;
  lookupMs: Quantiles;
}

/** Time the client's `keyDirectoryLookups` calls: `take()` answers (and resets) their count and total ms. */
function timeLookups(client: ParleyClient): { take(): { count: number; ms: number } } {
  let count = 0;
  let ms = 0;
  const lookup = client.keyDirectoryLookups.bind(client);
  client.keyDirectoryLookups = async (...args: Parameters<typeof lookup>) => {
    const start = process.hrtime.bigint();
    try {
      return await lookup(...args);
    } finally {
      count++;
      ms += msSince(start);
    }
  };
  return {
    take() {
      const out = { count, ms };
      count = ms = 0;
      return out;
    },
  };
}

/** `status` or throw with the answer's body. */
async function call(t: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, status: number, headers: Record<string, string>, payload?: object) {
  const res = await t.request({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Enroll, approve and activate an agent with `identity`; answers its device id, device JWT and conversation by owner device. */
async function activateAgent(t: TestApp, auth: Record<string, string>, identity: DeviceIdentity) {
  const invite = await call(t, 'POST', '/invites', 201, auth, {});
  const enrolled = await call(t, 'POST', '/enroll', 201, {}, {
    invite_token: invite.token,
    identity_public_key: identity.identityPublicKeyHex,
    ephemeral_public_key: identity.ephemeralPublicKeyHex,
    proof_of_possession: identity.proofOfPossession(),
    platform: 'node',
  });
  const deviceId = enrolled.device_id as string;
  await call(t, 'PATCH', `/devices/${deviceId}/approve`, 200, auth);
  const act = await call(t, 'POST', `/devices/${deviceId}/activate`, 200, {}, { signature: identity.signHex(new TextEncoder().encode(`activate:${deviceId}`)) });
  const conversations = new Map<string, string>((act.conversations as { conversation_id: string; owner_device_id: string }[]).map((c) => [c.owner_device_id, c.conversation_id]));
  return { deviceId, jwt: act.device_jwt as string, conversations };
}

/** Start `peers + 1` agents' messengers once (they publish their prekeys and KeyPackages) and measure the first sends. */
export async function measureSetup(peers: number, log: (line: string) => void): Promise<SetupResult[]> {
  const t = await startApp({ listen: true, env: { LOG_LEVEL: 'silent', RATE_LIMITS: 'off', RATE_LIMIT_ENROLL_PER_10MIN: '100000' } });
  const messengers: SecureMessenger[] = [];
  try {
    const sub = `bench-kt-${randomUUID()}@example.com`;
    const ownerToken = await t.ownerToken(sub);
    const auth = { authorization: `Bearer ${ownerToken}` };
    await call(t, 'POST', '/tenants', 201, auth, { name: 'Key directory bench' });

    // Four owner devices: (protocol, key transparency) -> messenger.
    const owners = new Map<string, { deviceId: string; messenger: SecureMessenger; lookups: ReturnType<typeof timeLookups> }>();
    for (const protocol of PROTOCOLS) {
      for (const kt of [false, true]) {
        const identity = DeviceIdentity.generate();
        const reg = await call(t, 'POST', '/devices/register', 201, auth, { identity_public_key: identity.identityPublicKeyHex, ephemeral_public_key: identity.ephemeralPublicKeyHex, name: `${protocol}-${kt}` });
        const deviceId = reg.device_id as string;
        const client = new ParleyClient({ baseUrl: t.baseUrl, ownerToken, ownerDeviceId: deviceId });
        const lookups = timeLookups(client);
        const messenger = await SecureMessenger.open({
          identity: identity.withDeviceId(deviceId),
          store: new MemorySessionStore(),
          client,
          resolvePeer: ownerPeerResolver(client, deviceId),
          transport: restTransport(client, deviceId),
          mls: protocol === 'mls',
          keyTransparency: kt,
        });
        messengers.push(messenger);
        owners.set(`${protocol}:${kt}`, { deviceId, messenger, lookups });
      }
    }

    const agents: Map<string, string>[] = [];
    const started = process.hrtime.bigint();
    for (let i = 0; i <= peers; i++) {
      const identity = DeviceIdentity.generate().withPqPrekey();
      const a = await activateAgent(t, auth, identity);
      const client = new ParleyClient({ baseUrl: t.baseUrl, deviceToken: a.jwt });
      const m = await SecureMessenger.open({ identity: identity.withDeviceId(a.deviceId), store: new MemorySessionStore(), client, mls: { targetKeyPackages: 4, minKeyPackages: 2 }, prekeys: true });
      await m.start();
      await m.close();
      agents.push(a.conversations);
      if ((i + 1) % 10 === 0) log(`  ${i + 1} agents ready (${(msSince(started) / 1000).toFixed(1)} s)`);
    }

    const samples = new Map<string, number[]>();
    const seen = new Map<Protocol, Set<string>>(PROTOCOLS.map((p) => [p, new Set<string>()]));
    const lookupCounts = new Map<Protocol, number>();
    const lookupMs = new Map<Protocol, number[]>();
    const send = async (protocol: Protocol, kt: boolean, i: number) => {
      const o = owners.get(`${protocol}:${kt}`)!;
      const conversationId = agents[i]!.get(o.deviceId);
      if (!conversationId) throw new Error(`agent ${i} has no conversation with owner device ${o.deviceId}`);
      let sent: { protocol: string } | undefined;
      o.lookups.take();
      const ms = await timed(async () => (sent = await o.messenger.sendText(conversationId, `hello ${i}`)));
      const lookups = o.lookups.take();
      if (i === 0) return; // warm-up
      seen.get(protocol)!.add(sent!.protocol);
      const key = `${protocol}:${kt}`;
      samples.set(key, [...(samples.get(key) ?? []), ms]);
      if (kt) {
        lookupCounts.set(protocol, (lookupCounts.get(protocol) ?? 0) + lookups.count);
        lookupMs.set(protocol, [...(lookupMs.get(protocol) ?? []), lookups.ms]);
      }
    };
    for (let i = 0; i <= peers; i++) {
      for (const protocol of PROTOCOLS) {
        const order = i % 2 === 0 ? [false, true] : [true, false];
        for (const kt of order) await send(protocol, kt, i);
      }
    }
    return PROTOCOLS.map((protocol) => ({
      protocol,
      off: quantiles(samples.get(`${protocol}:false`) ?? []),
      on: quantiles(samples.get(`${protocol}:true`) ?? []),
      seen: [...seen.get(protocol)!].join(', '),
      lookups: (lookupCounts.get(protocol) ?? 0) / peers,
      lookupMs: quantiles(lookupMs.get(protocol) ?? []),
    }));
  } finally {
    for (const m of messengers) await m.close().catch(() => undefined);
    await t.close();
  }
}
