/**
 * MLS (RFC 9420) through the real Parley server: the server listens on a port and every byte of
 * MLS traffic crosses it exactly as a deployment would carry it.
 *
 * - KeyPackages: each device publishes them with `POST /api/v1/mls/key-packages` (agent: device
 *   JWT; owner device: owner JWT + X-Device-Id); whoever adds a device claims one with
 *   `POST /api/v1/mls/key-packages/claim`.
 * - Welcome, commit and application messages are ordinary Parley messages carrying the MLS wire
 *   envelope (`encodeMlsEnvelope`: header_blob = MLS header JSON, ciphertext = MLSMessage). Owner
 *   devices send with `POST /api/v1/conversations/{id}/messages` (X-Device-Id); agents have no REST
 *   send route and send `message` frames on a `ws` socket, waiting for `message_ack`.
 * - Receiving is by history: agents read `GET /api/v1/devices/{id}/messages`, owner devices read
 *   `GET /api/v1/conversations/{id}/messages` of every conversation of the agent's group (owner
 *   history is tenant-wide), merged in cursor order (the cursor is a global, total order).
 *
 * Conversations are pairwise (one agent device, one owner device), so a group message is sent once
 * per conversation it must cross, with the same ciphertext each time: the agent sends it in the
 * conversation of every owner-device member it addresses; an owner device has only its conversation
 * with the agent, and the other owner devices of the tenant read it there. Receivers drop
 * duplicates by ciphertext. The MLS group id is the Parley `message_group_id` of the agent.
 *
 * MLS signature keys are the devices' Parley Ed25519 identity keys, and every client checks
 * credentials against the server's device directory (`GET /devices/{id}/keys`).
 *
 * After every test the stored rows of the tenant are read back through
 * `t.app.parley.database`: they are exactly the envelopes that were sent, and none contains a
 * plaintext.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createApplicationMessage,
  createCommit,
  createGroup as rawCreateGroup,
  decodeGroupState,
  decodeMlsMessage,
  defaultCapabilities,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetime,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  processPrivateMessage,
  type ClientConfig,
  type ClientState,
  type Credential,
} from 'ts-mls';
import { schema, withTenant, activeAgent, newOwner, registerOwnerDevice, type Agent, type Owner, type OwnerDevice, startApp, type TestApp, WsPool, wsAddress, type WsClient, type DeviceKeys } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import type { StoredMessage } from '@parley/protocol';
import {
  MLS_CIPHERSUITE,
  MlsClient,
  MlsClientError,
  decodeMlsEnvelope,
  encodeMlsEnvelope,
  inspectKeyPackage,
  inspectMlsMessage,
  type Ed25519KeyPair,
  type MlsEnvelopeHeader,
  type MlsJoinResult,
  type MlsProcessResult,
  type MlsWireFields,
} from '../src/mls/index.js';
const { messages: messagesTable } = schema;

const enc = new TextEncoder();
const dec = new TextDecoder();
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

let t: TestApp;
const pool = new WsPool();

beforeAll(async () => {
  t = await startApp({ listen: true, env: { RATE_LIMIT_ENROLL_PER_10MIN: '1000' } });
});
afterEach(() => pool.closeAll());
afterAll(() => t?.close());

// ---------------------------------------------------------------- world: one tenant, one agent

/** The device's Parley Ed25519 identity key pair as an MLS signature key pair (raw 32-byte seed). */
function signatureKeyPair(keys: DeviceKeys): Ed25519KeyPair {
  const seed = Buffer.from(keys.privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return { publicKey: new Uint8Array(Buffer.from(keys.identityPublicKey, 'hex')), signKey: new Uint8Array(seed) };
}

interface World {
  owner: Owner;
  /** Owner REST client without an acting device (directory look-ups, conversation list). */
  ownerRest: ParleyClient;
  agent: Agent;
  ownerDevices: OwnerDevice[];
  /** The MLS group id: the agent's Parley conversation group. */
  groupId: string;
  /** Every envelope accepted by the server (one entry per stored row). */
  stored: MlsWireFields[];
  /** Every plaintext encrypted in the test (must never appear in the database). */
  plaintexts: string[];
  /** Conversation (agent, owner device) by owner device id; refreshed on a miss. */
  conversationWith(ownerDeviceId: string): Promise<string>;
  /** All conversations of the agent (what owner devices read). */
  agentConversations(): Promise<string[]>;
  /** MLS credential check: the leaf's signature key must be the device's registered identity key. */
  directory(deviceId: string, signaturePublicKey: Uint8Array): Promise<boolean>;
  /** A fresh, recognisable plaintext, remembered for the database check. */
  plain(label: string): string;
}

/** A new tenant with `ownerDeviceCount` owner devices (registered first) and one ACTIVE agent. */
async function newWorld(ownerDeviceCount: number): Promise<World> {
  const owner = await newOwner(t, 'MLS Co');
  const ownerDevices: OwnerDevice[] = [];
  for (let i = 0; i < ownerDeviceCount; i++) ownerDevices.push(await registerOwnerDevice(t, owner));
  const agent = await activeAgent(t, owner);
  const ownerRest = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: owner.token, tenantId: owner.tenantId });
  const conversations = new Map<string, string>();
  const listAgentConversations = async () => {
    const list = await ownerRest.listConversations({ device_id: agent.deviceId });
    for (const c of list.conversations) conversations.set(c.owner_device_id, c.conversation_id);
    return list.conversations.map((c) => c.conversation_id);
  };
  const w: World = {
    owner,
    ownerRest,
    agent,
    ownerDevices,
    groupId: agent.groupId,
    stored: [],
    plaintexts: [],
    async conversationWith(ownerDeviceId) {
      if (!conversations.has(ownerDeviceId)) await listAgentConversations();
      const id = conversations.get(ownerDeviceId);
      if (id === undefined) throw new Error(`no conversation between the agent and ${ownerDeviceId}`);
      return id;
    },
    agentConversations: listAgentConversations,
    async directory(deviceId, signaturePublicKey) {
      try {
        const keys = await ownerRest.deviceKeys(deviceId);
        return Buffer.from(keys.identity_public_key, 'hex').equals(Buffer.from(signaturePublicKey));
      } catch {
        return false;
      }
    },
    plain(label) {
      const p = `${label} / secret ${randomBytes(8).toString('hex')}`;
      w.plaintexts.push(p);
      return p;
    },
  };
  return w;
}

/** Add an owner device to the world later (its conversation with the agent is provisioned at once). */
async function addOwnerDevice(w: World): Promise<OwnerDevice> {
  const od = await registerOwnerDevice(t, w.owner);
  w.ownerDevices.push(od);
  return od;
}

/**
 * The stored messages of the tenant, read from the database: exactly the envelopes that were sent
 * (byte for byte, each a well-formed MLS envelope), and no plaintext anywhere in them.
 */
async function expectOnlyCiphertextStored(w: World): Promise<void> {
  const rows = await withTenant(t.app.parley.database.db, w.owner.tenantId, (tx) =>
    tx.select({ headerBlob: messagesTable.headerBlob, ciphertext: messagesTable.ciphertext }).from(messagesTable),
  );
  expect(rows.length).toBe(w.stored.length);
  const key = (f: MlsWireFields) => `${f.header_blob}.${f.ciphertext}`;
  expect(rows.map((r) => key({ header_blob: r.headerBlob.toString('base64'), ciphertext: r.ciphertext.toString('base64') })).sort()).toEqual(
    w.stored.map(key).sort(),
  );
  expect(w.plaintexts.length).toBeGreaterThan(0);
  for (const r of rows) {
    decodeMlsEnvelope({ header_blob: r.headerBlob.toString('base64'), ciphertext: r.ciphertext.toString('base64') });
    for (const p of w.plaintexts) {
      const needle = Buffer.from(p, 'utf8');
      expect(r.ciphertext.includes(needle), `ciphertext column contains "${p}"`).toBe(false);
      expect(r.headerBlob.includes(needle), `header_blob column contains "${p}"`).toBe(false);
      // Nor the secret part alone, in any of the encodings a careless client might use.
      const secret = p.slice(p.lastIndexOf(' ') + 1);
      for (const form of [secret, Buffer.from(secret).toString('base64')]) {
        expect(r.ciphertext.includes(Buffer.from(form))).toBe(false);
        expect(r.headerBlob.includes(Buffer.from(form))).toBe(false);
      }
    }
  }
}

// ---------------------------------------------------------------- transport: one device on the server

/** Sends and fetches opaque envelopes for one device, through the routes a real client uses. */
class Transport {
  private readonly seen = new Set<string>();
  private readonly cursors = new Map<string, string>();
  private refs = 0;

  constructor(
    readonly w: World,
    readonly deviceId: string,
    readonly kind: 'agent' | 'owner',
    readonly rest: ParleyClient,
    readonly ws: WsClient | undefined,
  ) {}

  static async agent(w: World): Promise<Transport> {
    const ws = await pool.connect(wsAddress(t.wsUrl, { token: w.agent.jwt }));
    return new Transport(w, w.agent.deviceId, 'agent', new ParleyClient({ baseUrl: t.baseUrl, deviceToken: w.agent.jwt }), ws);
  }

  static owner(w: World, od: OwnerDevice): Transport {
    const rest = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: w.owner.token, tenantId: w.owner.tenantId, ownerDeviceId: od.deviceId });
    return new Transport(w, od.deviceId, 'owner', rest, undefined);
  }

  /** The conversations one message to `to` (device ids) goes through (see the file comment). */
  private async conversationsFor(to: string[]): Promise<string[]> {
    expect(to.length).toBeGreaterThan(0);
    expect(to).not.toContain(this.deviceId);
    if (this.kind === 'owner') return [await this.w.conversationWith(this.deviceId)];
    const out = new Set<string>();
    for (const id of to) out.add(await this.w.conversationWith(id));
    return [...out];
  }

  /** Sends the same envelope once per conversation; resolves with the stored messages (after commit). */
  async send(fields: MlsWireFields, to: string[]): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    for (const conversationId of await this.conversationsFor(to)) {
      const body = { ...fields, message_group_id: this.w.groupId };
      if (this.kind === 'owner') {
        out.push(await this.rest.sendMessage(conversationId, body));
      } else {
        const clientRef = `mls-${++this.refs}`;
        this.ws!.send('message', { conversation_id: conversationId, ...body, client_ref: clientRef });
        const ack = await this.ws!.next((f) => (f.event === 'message_ack' || f.event === 'error') && f.data?.client_ref === clientRef);
        if (ack.event === 'error') throw new Error(`message refused: ${ack.data.status} ${ack.data.detail}`);
        out.push({ ...body, conversation_id: conversationId, sender_device_id: this.deviceId, ...ack.data } as StoredMessage);
      }
      this.w.stored.push(fields);
    }
    return out;
  }

  /** Every history page of one source after its cursor. */
  private async drain(source: string, page: (since: string) => Promise<{ messages: StoredMessage[]; next_cursor: string | null }>): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    for (;;) {
      const p = await page(this.cursors.get(source) ?? '0');
      out.push(...p.messages);
      if (p.next_cursor !== null) this.cursors.set(source, p.next_cursor);
      if (p.messages.length < 200) return out;
    }
  }

  /** New messages from other devices, in server order, each ciphertext once. */
  async fetchNew(): Promise<StoredMessage[]> {
    let all: StoredMessage[];
    if (this.kind === 'agent') {
      all = await this.drain('device', (since) => this.rest.deviceMessages(this.deviceId, { since, limit: 200 }));
    } else {
      all = [];
      for (const c of await this.w.agentConversations()) {
        all.push(...(await this.drain(c, (since) => this.rest.conversationMessages(c, { since, limit: 200 }))));
      }
      all.sort((a, b) => (BigInt(a.cursor) < BigInt(b.cursor) ? -1 : BigInt(a.cursor) > BigInt(b.cursor) ? 1 : 0));
    }
    const fresh: StoredMessage[] = [];
    for (const m of all) {
      if (m.sender_device_id === this.deviceId || this.seen.has(m.ciphertext)) continue;
      this.seen.add(m.ciphertext);
      fresh.push(m);
    }
    return fresh;
  }
}

// ---------------------------------------------------------------- member: MlsClient over a transport

interface Received {
  message: StoredMessage;
  header: MlsEnvelopeHeader;
  bytes: Uint8Array;
  joined?: MlsJoinResult;
  result?: MlsProcessResult;
  /** Why the message was not processed: a Welcome for another device, or traffic from before we joined. */
  skipped?: 'welcome-not-for-us' | 'before-join';
  error?: unknown;
}

class Member {
  /** Epoch at which we entered each group (created it or joined by Welcome). */
  readonly joinedAt = new Map<string, bigint>();

  constructor(
    readonly name: string,
    readonly transport: Transport,
    readonly mls: MlsClient,
  ) {}

  static async agent(w: World): Promise<Member> {
    const mls = await MlsClient.create({
      deviceId: w.agent.deviceId,
      signatureKeyPair: signatureKeyPair(w.agent.keys),
      validateCredential: (id, key) => w.directory(id, key),
    });
    return new Member('agent', await Transport.agent(w), mls);
  }

  static async owner(w: World, od: OwnerDevice, name: string): Promise<Member> {
    const mls = await MlsClient.create({
      deviceId: od.deviceId,
      signatureKeyPair: signatureKeyPair(od.keys),
      validateCredential: (id, key) => w.directory(id, key),
    });
    return new Member(name, Transport.owner(w, od), mls);
  }

  get deviceId(): string {
    return this.transport.deviceId;
  }

  get w(): World {
    return this.transport.w;
  }

  /** Generates `n` KeyPackages and publishes them through the server. */
  async publishKeyPackages(n: number): Promise<Uint8Array[]> {
    const kps = await this.mls.generateKeyPackages(n);
    const res = await this.transport.rest.publishKeyPackages({ key_packages: kps.map(b64) });
    expect(res).toMatchObject({ device_id: this.deviceId, published: n });
    return kps;
  }

  /** Claims one KeyPackage of `deviceId` and checks it is a valid KeyPackage of that device. */
  async claimKeyPackage(deviceId: string): Promise<Uint8Array> {
    const claimed = await this.transport.rest.claimKeyPackage({ device_id: deviceId });
    expect(claimed.device_id).toBe(deviceId);
    const bytes = unb64(claimed.key_package);
    expect((await inspectKeyPackage(bytes)).deviceId).toBe(deviceId);
    return bytes;
  }

  async createGroup(): Promise<string> {
    const { groupId, epoch } = await this.mls.createGroup(this.w.groupId);
    this.joinedAt.set(groupId, epoch);
    return groupId;
  }

  /** Claims a KeyPackage of each new member, commits, relays the commit to `existing` and the Welcome to `added`. */
  async add(added: Member[], existing: Member[]): Promise<void> {
    const kps = [];
    for (const m of added) kps.push(await this.claimKeyPackage(m.deviceId));
    const res = await this.mls.addMembers(this.w.groupId, kps);
    expect(res.added).toEqual(added.map((m) => m.deviceId));
    if (existing.length > 0) {
      await this.transport.send(encodeMlsEnvelope({ groupId: res.groupId, kind: 'commit', epoch: res.commitEpoch, message: res.commit }), existing.map((m) => m.deviceId));
    }
    await this.transport.send(encodeMlsEnvelope({ groupId: res.groupId, kind: 'welcome', epoch: res.epoch, message: res.welcome }), added.map((m) => m.deviceId));
  }

  /** Removes `removed`, relaying the commit to the remaining members and to the removed ones. */
  async remove(removed: Member[], remaining: Member[]): Promise<void> {
    const res = await this.mls.removeMembers(this.w.groupId, removed.map((m) => m.deviceId));
    await this.transport.send(
      encodeMlsEnvelope({ groupId: res.groupId, kind: 'commit', epoch: res.commitEpoch, message: res.commit }),
      [...remaining, ...removed].map((m) => m.deviceId),
    );
  }

  /** Encrypts `text` for the group and sends it towards `to` (members or device ids); returns the envelope. */
  async say(text: string, to: (Member | string)[]): Promise<MlsWireFields> {
    const epoch = this.mls.epoch(this.w.groupId);
    const message = await this.mls.encrypt(this.w.groupId, text);
    const fields = encodeMlsEnvelope({ groupId: this.w.groupId, kind: 'application', epoch, message });
    await this.transport.send(fields, to.map((m) => (typeof m === 'string' ? m : m.deviceId)));
    return fields;
  }

  /** Fetches new messages and processes them in server order; errors are recorded, not thrown. */
  async receive(): Promise<Received[]> {
    const out: Received[] = [];
    for (const message of await this.transport.fetchNew()) {
      const { header, message: bytes } = decodeMlsEnvelope(message);
      const r: Received = { message, header, bytes };
      out.push(r);
      if (header.kind === 'welcome') {
        if (this.mls.hasGroup(header.group_id) && this.mls.isActive(header.group_id)) {
          r.skipped = 'welcome-not-for-us';
          continue;
        }
        try {
          r.joined = await this.mls.joinFromWelcome(bytes);
          expect(r.joined.groupId).toBe(header.group_id);
          expect(r.joined.epoch).toBe(BigInt(header.epoch));
          this.joinedAt.set(r.joined.groupId, r.joined.epoch);
        } catch (err) {
          if (err instanceof MlsClientError && err.code === 'no_matching_key_package') r.skipped = 'welcome-not-for-us';
          else r.error = err;
        }
        continue;
      }
      const joined = this.joinedAt.get(header.group_id);
      if (joined === undefined || BigInt(header.epoch) < joined) {
        r.skipped = 'before-join';
        continue;
      }
      try {
        r.result = await this.mls.processMessage(header.group_id, bytes);
      } catch (err) {
        r.error = err;
      }
    }
    return out;
  }

  /** {@link receive}, failing on any error. */
  async sync(): Promise<Received[]> {
    const got = await this.receive();
    for (const r of got) if (r.error !== undefined) throw new Error(`${this.name}: ${r.header.kind} from ${r.message.sender_device_id} failed`, { cause: r.error });
    return got;
  }

  /** Application messages received by {@link sync}, as `sender: text`. */
  async texts(): Promise<string[]> {
    return (await this.sync()).flatMap((r) => (r.result?.kind === 'application' ? [`${r.result.sender}: ${dec.decode(r.result.plaintext)}`] : []));
  }
}

const line = (m: Member, text: string) => `${m.deviceId}: ${text}`;

async function expectMlsError(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MlsClientError);
  expect((err as MlsClientError).code).toBe(code);
}

// ---------------------------------------------------------------- tests

describe('MLS through the Parley server', () => {
  it('two-party group: agent and owner device, Welcome and messages both ways', async () => {
    const w = await newWorld(1);
    const agent = await Member.agent(w);
    const laptop = await Member.owner(w, w.ownerDevices[0]!, 'laptop');

    await agent.publishKeyPackages(2);
    expect((await laptop.transport.rest.keyPackageCount(agent.deviceId)).available).toBe(2);

    // The owner device creates the group and adds the agent with a KeyPackage claimed from the server.
    await laptop.createGroup();
    await laptop.add([agent], []);
    expect((await laptop.transport.rest.keyPackageCount(agent.deviceId)).available).toBe(1);

    const got = await agent.sync();
    expect(got).toHaveLength(1);
    expect(got[0]!.header).toEqual({ v: 1, protocol: 'mls', group_id: w.groupId, kind: 'welcome', epoch: 1 });
    expect(got[0]!.message).toMatchObject({ sender_device_id: laptop.deviceId, message_group_id: w.groupId });
    expect(got[0]!.joined).toEqual({ groupId: w.groupId, epoch: 1n, members: [laptop.deviceId, agent.deviceId] });
    expect(agent.mls.keyPackageCount()).toBe(1);

    // Owner device -> agent (REST send); the agent's socket also gets it live, same bytes.
    const hello = w.plain('hello agent');
    const sent = await laptop.say(hello, [agent]);
    const live = await agent.transport.ws!.next((f) => f.event === 'message' && f.data.ciphertext === sent.ciphertext);
    expect(live.data).toMatchObject({ header_blob: sent.header_blob, sender_device_id: laptop.deviceId });
    expect(await agent.texts()).toEqual([line(laptop, hello)]);

    // Agent -> owner device (WebSocket send), several in a row.
    const replies = [w.plain('hello laptop'), w.plain('second reply'), w.plain('third reply')];
    for (const r of replies) await agent.say(r, [laptop]);
    expect(await laptop.texts()).toEqual(replies.map((r) => line(agent, r)));

    // A key update from the agent moves both to epoch 2; traffic continues.
    const upd = await agent.mls.updateKeys(w.groupId);
    await agent.transport.send(encodeMlsEnvelope({ groupId: w.groupId, kind: 'commit', epoch: upd.commitEpoch, message: upd.commit }), [laptop.deviceId]);
    const after = w.plain('after the update');
    await agent.say(after, [laptop]);
    const processed = await laptop.sync();
    expect(processed.map((r) => r.result?.kind)).toEqual(['commit', 'application']);
    expect(processed[0]!.result).toMatchObject({ kind: 'commit', epoch: 2n, sender: agent.deviceId, added: [], removed: [] });
    expect(processed[1]!.result).toMatchObject({ kind: 'application', epoch: 2n, sender: agent.deviceId });
    expect(laptop.mls.epoch(w.groupId)).toBe(2n);

    // Nothing new is delivered twice.
    expect(await agent.sync()).toEqual([]);
    expect(await laptop.sync()).toEqual([]);
    await expectOnlyCiphertextStored(w);
  });

  it('three-party group: agent and two owner devices of the same tenant', async () => {
    const w = await newWorld(2);
    const agent = await Member.agent(w);
    const laptop = await Member.owner(w, w.ownerDevices[0]!, 'laptop');
    const phone = await Member.owner(w, w.ownerDevices[1]!, 'phone');
    expect(await w.agentConversations()).toHaveLength(2);
    await laptop.publishKeyPackages(1);
    await phone.publishKeyPackages(1);

    // The agent adds both owner devices in one commit; one Welcome, sent in both conversations.
    await agent.createGroup();
    await agent.add([laptop, phone], []);
    for (const m of [laptop, phone]) {
      const got = await m.sync();
      expect(got.filter((r) => r.joined !== undefined)).toHaveLength(1);
      expect(m.mls.memberIds(w.groupId)).toEqual([agent.deviceId, laptop.deviceId, phone.deviceId]);
    }
    expect(w.stored).toHaveLength(2);
    expect(w.stored[0]).toEqual(w.stored[1]);

    // Each member speaks once; both others read it.
    const fromAgent = w.plain('agent to all');
    await agent.say(fromAgent, [laptop, phone]);
    const fromLaptop = w.plain('laptop to all');
    await laptop.say(fromLaptop, [agent, phone]);
    const fromPhone = w.plain('phone to all');
    await phone.say(fromPhone, [agent, laptop]);

    expect(await agent.texts()).toEqual([line(laptop, fromLaptop), line(phone, fromPhone)]);
    expect(await laptop.texts()).toEqual([line(agent, fromAgent), line(phone, fromPhone)]);
    expect(await phone.texts()).toEqual([line(agent, fromAgent), line(laptop, fromLaptop)]);

    // The agent's message crossed both conversations (same ciphertext), the owner devices' one each.
    expect(w.stored.filter((f) => decodeMlsEnvelope(f).header.kind === 'application')).toHaveLength(4);
    await expectOnlyCiphertextStored(w);
  });

  it('a member added later joins at the new epoch and cannot read earlier traffic', async () => {
    const w = await newWorld(1);
    const agent = await Member.agent(w);
    const laptop = await Member.owner(w, w.ownerDevices[0]!, 'laptop');
    await laptop.publishKeyPackages(1);
    await agent.createGroup();
    await agent.add([laptop], []);
    await laptop.sync();
    const early = w.plain('before the phone existed');
    await agent.say(early, [laptop]);
    const earlyReply = w.plain('laptop reply, also early');
    await laptop.say(earlyReply, [agent]);
    expect(await laptop.texts()).toEqual([line(agent, early)]);
    expect(await agent.texts()).toEqual([line(laptop, earlyReply)]);

    // A new owner device appears: the server provisions its conversation with the agent.
    const phone = await Member.owner(w, await addOwnerDevice(w), 'phone');
    await phone.publishKeyPackages(2);
    await agent.add([phone], [laptop]);

    // The laptop reads every conversation of the agent, so it also sees the phone's Welcome (and
    // cannot use it).
    const laptopSaw = await laptop.sync();
    expect(laptopSaw.map((r) => r.skipped ?? r.header.kind)).toEqual(['commit', 'welcome-not-for-us']);
    expect(laptopSaw[0]!.result).toMatchObject({ kind: 'commit', epoch: 2n, sender: agent.deviceId, added: [phone.deviceId], removed: [] });
    // The phone reads the whole history of the agent's conversations (owner history is tenant-wide):
    // the early traffic is there, but only the Welcome is usable.
    const phoneSaw = await phone.sync();
    const joined = phoneSaw.filter((r) => r.joined !== undefined);
    expect(joined.map((r) => r.joined)).toEqual([{ groupId: w.groupId, epoch: 2n, members: [agent.deviceId, laptop.deviceId, phone.deviceId] }]);
    const before = phoneSaw.filter((r) => r.skipped === 'before-join');
    expect(before.map((r) => r.header.kind).sort()).toEqual(['application', 'application', 'commit']);
    for (const r of before) await expectMlsError(phone.mls.processMessage(w.groupId, r.bytes), 'epoch_too_old');

    const late = [w.plain('agent, epoch 2'), w.plain('laptop, epoch 2'), w.plain('phone, epoch 2')];
    await agent.say(late[0]!, [laptop, phone]);
    await laptop.say(late[1]!, [agent, phone]);
    await phone.say(late[2]!, [agent, laptop]);
    expect(await phone.texts()).toEqual([line(agent, late[0]!), line(laptop, late[1]!)]);
    expect(await laptop.texts()).toEqual([line(agent, late[0]!), line(phone, late[2]!)]);
    expect(await agent.texts()).toEqual([line(laptop, late[1]!), line(phone, late[2]!)]);
    await expectOnlyCiphertextStored(w);
  });

  it('a removed member cannot decrypt messages sent after the removal commit', async () => {
    const w = await newWorld(2);
    const agent = await Member.agent(w);
    const laptop = await Member.owner(w, w.ownerDevices[0]!, 'laptop');
    const phone = await Member.owner(w, w.ownerDevices[1]!, 'phone');
    await laptop.publishKeyPackages(1);
    await phone.publishKeyPackages(1);
    await agent.createGroup();
    await agent.add([laptop, phone], []);
    await laptop.sync();
    await phone.sync();
    const shared = w.plain('while the phone is a member');
    await phone.say(shared, [agent, laptop]);
    expect(await agent.texts()).toEqual([line(phone, shared)]);
    expect(await laptop.texts()).toEqual([line(phone, shared)]);

    // The laptop removes the (lost) phone; the commit goes to the agent and reaches the phone too.
    const phoneBefore = phone.mls.exportState();
    await laptop.remove([phone], [agent]);
    expect(laptop.mls.memberIds(w.groupId)).toEqual([agent.deviceId, laptop.deviceId]);
    const agentSaw = await agent.sync();
    expect(agentSaw.map((r) => r.result)).toEqual([expect.objectContaining({ kind: 'commit', epoch: 2n, sender: laptop.deviceId, removed: [phone.deviceId], selfRemoved: false })]);
    const phoneSaw = await phone.sync();
    expect(phoneSaw.map((r) => r.result)).toEqual([expect.objectContaining({ kind: 'commit', removed: [phone.deviceId], selfRemoved: true })]);
    expect(phone.mls.isActive(w.groupId)).toBe(false);

    // After the removal: the remaining members talk; the phone still fetches the ciphertext from
    // the server (same owner, tenant-wide history) but cannot decrypt it.
    const secretAgent = w.plain('agent, after the removal');
    const fromAgent = await agent.say(secretAgent, [laptop]);
    const secretLaptop = w.plain('laptop, after the removal');
    const fromLaptop = await laptop.say(secretLaptop, [agent]);
    expect(await laptop.texts()).toEqual([line(agent, secretAgent)]);
    expect(await agent.texts()).toEqual([line(laptop, secretLaptop)]);

    const phoneAfter = await phone.receive();
    expect(phoneAfter.map((r) => r.message.ciphertext)).toEqual([fromAgent.ciphertext, fromLaptop.ciphertext]);
    for (const r of phoneAfter) {
      expect(r.result).toBeUndefined();
      expect(r.error).toBeInstanceOf(MlsClientError);
      expect((r.error as MlsClientError).code).toBe('inactive_group');
    }
    await expectMlsError(phone.mls.encrypt(w.groupId, 'still here?'), 'inactive_group');

    // Below the MlsClient checks: ts-mls itself, given the phone's own group state after the
    // removal (or a copy from before it, as a removed device that ignores the commit would keep),
    // cannot open the epoch-2 messages.
    const impl = await getCiphersuiteImpl(getCiphersuiteFromName(MLS_CIPHERSUITE));
    const stateOf = (exported: string): ClientState => {
      const g = (JSON.parse(exported) as { groups: { groupId: string; state: string }[] }).groups.find((x) => x.groupId === w.groupId)!;
      const [state] = decodeGroupState(unb64(g.state), 0)!;
      const clientConfig: ClientConfig = {
        keyRetentionConfig: defaultKeyRetentionConfig,
        lifetimeConfig: defaultLifetimeConfig,
        keyPackageEqualityConfig: defaultKeyPackageEqualityConfig,
        paddingConfig: defaultPaddingConfig,
        authService: { validateCredential: async () => true },
      };
      return { ...state, clientConfig };
    };
    for (const exported of [phone.mls.exportState(), phoneBefore]) {
      const state = stateOf(exported);
      for (const fields of [fromAgent, fromLaptop]) {
        const msg = decodeMlsMessage(unb64(fields.ciphertext), 0)![0];
        if (msg.wireformat !== 'mls_private_message') throw new Error('expected a PrivateMessage');
        expect(msg.privateMessage.epoch).toBe(2n);
        // The epoch-1 keys it still holds do not open epoch-2 ciphertext (AEAD failure; ts-mls is pinned).
        await expect(processPrivateMessage(state, msg.privateMessage, emptyPskIndex, impl)).rejects.toThrow(/invalid tag/);
      }
    }
    await expectOnlyCiphertextStored(w);
  });

  it('KeyPackages are single use: each claim returns the next one, then 404', async () => {
    const w = await newWorld(1);
    const agent = await Member.agent(w);
    const laptop = await Member.owner(w, w.ownerDevices[0]!, 'laptop');
    const published = await agent.publishKeyPackages(2);
    expect(await laptop.transport.rest.keyPackageCount(agent.deviceId)).toEqual({ device_id: agent.deviceId, available: 2, by_cipher_suite: [{ cipher_suite: 3, available: 2 }] });

    const first = await laptop.claimKeyPackage(agent.deviceId);
    const second = await laptop.claimKeyPackage(agent.deviceId);
    expect(first).toEqual(published[0]);
    expect(second).toEqual(published[1]);
    expect(second).not.toEqual(first);
    expect((await laptop.transport.rest.keyPackageCount(agent.deviceId)).available).toBe(0);
    const none = await laptop.transport.rest.claimKeyPackage({ device_id: agent.deviceId }).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(ParleyApiError);
    expect((none as ParleyApiError).status).toBe(404);
    // The agent's own device JWT cannot get them back either.
    const again = await agent.transport.rest.claimKeyPackage({ device_id: agent.deviceId }).catch((e: unknown) => e);
    expect((again as ParleyApiError).status).toBe(404);

    // The claimed KeyPackage works once: the agent joins with it ...
    await laptop.createGroup();
    const add = await laptop.mls.addMembers(w.groupId, [first]);
    await laptop.transport.send(encodeMlsEnvelope({ groupId: w.groupId, kind: 'welcome', epoch: add.epoch, message: add.welcome }), [agent.deviceId]);
    expect((await agent.sync()).map((r) => r.joined?.epoch)).toEqual([1n]);
    expect(agent.mls.keyPackageCount()).toBe(1);
    // ... and a Welcome made from the same KeyPackage again (a replayed claim) is useless: its
    // private key was deleted on first use.
    const replayer = await MlsClient.create({ deviceId: laptop.deviceId, signatureKeyPair: signatureKeyPair(w.ownerDevices[0]!.keys) });
    await replayer.createGroup('replayed-key-package');
    const replay = await replayer.addMembers('replayed-key-package', [first]);
    await expectMlsError(agent.mls.joinFromWelcome(replay.welcome), 'no_matching_key_package');

    // The server relays KeyPackages opaquely: one not signed with the device's registered identity
    // key (as a malicious relay could hand out) is refused by the claimer's credential check.
    const forger = await MlsClient.create({ deviceId: laptop.deviceId });
    const [forged] = await forger.generateKeyPackages(1);
    await laptop.transport.rest.publishKeyPackages({ key_packages: [b64(forged!)] });
    const claimedForged = await agent.claimKeyPackage(laptop.deviceId);
    await agent.mls.deleteGroup(w.groupId);
    await agent.createGroup();
    await expectMlsError(agent.mls.addMembers(w.groupId, [claimedForged]), 'invalid_key_package');
    expect(agent.mls.memberIds(w.groupId)).toEqual([agent.deviceId]);

    w.plain('no application data in this test');
    await expectOnlyCiphertextStored(w);
  });

  it('interop: a client written directly against ts-mls talks to an MlsClient through the server', async () => {
    const w = await newWorld(1);
    const laptop = await Member.owner(w, w.ownerDevices[0]!, 'laptop');
    await laptop.publishKeyPackages(1);

    // The agent side uses ts-mls only (and builds the Parley envelope by hand), on its own socket.
    const rawTransport = await Transport.agent(w);
    const impl = await getCiphersuiteImpl(getCiphersuiteFromName('MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519'));
    const credential: Credential = { credentialType: 'basic', identity: enc.encode(w.agent.deviceId) };
    const ownKp = await generateKeyPackageWithKey(credential, defaultCapabilities(), defaultLifetime, [], signatureKeyPair(w.agent.keys), impl);
    let raw: ClientState = await rawCreateGroup(enc.encode(w.groupId), ownKp.publicPackage, ownKp.privatePackage, [], impl);
    const header = (kind: 'welcome' | 'commit' | 'application', epoch: bigint) =>
      Buffer.from(JSON.stringify({ v: 1, protocol: 'mls', group_id: w.groupId, kind, epoch: Number(epoch) }), 'utf8').toString('base64');
    const rawSend = (kind: 'welcome' | 'application', epoch: bigint, bytes: Uint8Array) =>
      rawTransport.send({ header_blob: header(kind, epoch), ciphertext: b64(bytes) }, [laptop.deviceId]);
    const rawReceive = async (): Promise<string[]> => {
      const texts: string[] = [];
      for (const m of await rawTransport.fetchNew()) {
        const h = JSON.parse(Buffer.from(m.header_blob, 'base64').toString('utf8')) as { protocol: string; group_id: string; kind: string; epoch: number };
        expect(h).toMatchObject({ protocol: 'mls', group_id: w.groupId });
        const msg = decodeMlsMessage(unb64(m.ciphertext), 0)![0];
        if (msg.wireformat !== 'mls_private_message') throw new Error(`unexpected ${msg.wireformat}`);
        expect(BigInt(h.epoch)).toBe(msg.privateMessage.epoch);
        const r = await processPrivateMessage(raw, msg.privateMessage, emptyPskIndex, impl);
        raw = r.newState;
        if (r.kind === 'applicationMessage') texts.push(dec.decode(r.message));
        else texts.push(`<${h.kind}>`);
      }
      return texts;
    };

    // Claim the laptop's KeyPackage from the server and add it with ts-mls's createCommit.
    const claimed = await rawTransport.rest.claimKeyPackage({ device_id: laptop.deviceId });
    const kpMsg = decodeMlsMessage(unb64(claimed.key_package), 0)![0];
    if (kpMsg.wireformat !== 'mls_key_package') throw new Error('expected a KeyPackage');
    const commit = await createCommit(
      { state: raw, cipherSuite: impl },
      { extraProposals: [{ proposalType: 'add', add: { keyPackage: kpMsg.keyPackage } }], ratchetTreeExtension: true },
    );
    raw = commit.newState;
    await rawSend('welcome', raw.groupContext.epoch, encodeMlsMessage({ version: 'mls10', wireformat: 'mls_welcome', welcome: commit.welcome! }));
    const joined = await laptop.sync();
    expect(joined.map((r) => r.joined)).toEqual([{ groupId: w.groupId, epoch: 1n, members: [w.agent.deviceId, laptop.deviceId] }]);

    // ts-mls -> MlsClient.
    const fromRaw = [w.plain('from raw ts-mls 1'), w.plain('from raw ts-mls 2')];
    for (const text of fromRaw) {
      const out = await createApplicationMessage(raw, enc.encode(text), impl);
      raw = out.newState;
      await rawSend('application', raw.groupContext.epoch, encodeMlsMessage({ version: 'mls10', wireformat: 'mls_private_message', privateMessage: out.privateMessage }));
    }
    expect(await laptop.texts()).toEqual(fromRaw.map((text) => `${w.agent.deviceId}: ${text}`));

    // MlsClient -> ts-mls, then an MlsClient commit (key update) and traffic in the new epoch.
    const fromWrapped = w.plain('from MlsClient');
    const sent = await laptop.transport.send(
      encodeMlsEnvelope({ groupId: w.groupId, kind: 'application', epoch: 1n, message: await laptop.mls.encrypt(w.groupId, fromWrapped) }),
      [w.agent.deviceId],
    );
    expect(sent[0]!.sender_device_id).toBe(laptop.deviceId);
    expect(await rawReceive()).toEqual([fromWrapped]);
    const upd = await laptop.mls.updateKeys(w.groupId);
    expect(inspectMlsMessage(upd.commit)).toMatchObject({ wireformat: 'private_message', contentType: 'commit', epoch: 1n });
    await laptop.transport.send(encodeMlsEnvelope({ groupId: w.groupId, kind: 'commit', epoch: upd.commitEpoch, message: upd.commit }), [w.agent.deviceId]);
    const epoch2 = w.plain('MlsClient, epoch 2');
    await laptop.say(epoch2, [w.agent.deviceId]);
    expect(await rawReceive()).toEqual(['<commit>', epoch2]);
    expect(raw.groupContext.epoch).toBe(2n);
    const rawEpoch2 = w.plain('raw ts-mls, epoch 2');
    const out = await createApplicationMessage(raw, enc.encode(rawEpoch2), impl);
    raw = out.newState;
    await rawSend('application', 2n, encodeMlsMessage({ version: 'mls10', wireformat: 'mls_private_message', privateMessage: out.privateMessage }));
    expect(await laptop.texts()).toEqual([`${w.agent.deviceId}: ${rawEpoch2}`]);
    await expectOnlyCiphertextStored(w);
  });
});
