/**
 * svc_send_message / svc_poll_messages with the agent's owner and its rooms (contract §4.19, §4.6,
 * §4.4), through the local plugin of API-key agents against a real server: a message with only
 * `text` reaches the owner's device; an owner device registered after the agent registered talks
 * with it at once (`owner_device_linked`) and gets the owner's copy too; a room message sent with
 * `roomId` is decrypted by the other agent (polled by `roomId`) and by the owner's device.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParleyClient, restRoomTransport, RoomMessenger } from '@parley/sdk';
import { ownerSide } from '@parley/sdk/testing';
import { newOwner, type Owner, startApp, type TestApp } from '@parley/server/testing';
import { parseConfig } from '../src/config.js';
import { ToolRuntime } from '../src/server.js';
import { ok, pluginAgent, waitFor, type PluginAgent } from './fixtures.js';

type OwnerSide = Awaited<ReturnType<typeof ownerSide>>;
const textOf = (m: OwnerSide['received'][number]) => (m.content?.type === 'text' ? m.content.payload.text : undefined);

describe('messaging tools: the owner by default, owner devices added later, rooms', () => {
  let t: TestApp;
  let owner: Owner;
  let client: ParleyClient;
  let laptop: OwnerSide;
  let x: PluginAgent;
  let y: PluginAgent;
  let tx: ToolRuntime;
  let ty: ToolRuntime;
  /** The conversation of `agentId` with owner device `ownerDeviceId`. */
  const conversationOf = async (agentId: string, ownerDeviceId: string) =>
    (await client.listConversations({ device_id: ownerDeviceId })).conversations.find((c) => c.agent_device_id === agentId)!.conversation_id;

  beforeAll(async () => {
    t = await startApp({ listen: true });
    owner = await newOwner(t, 'Owner Rooms Co');
    client = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: owner.token });
    client.setTenantId(owner.tenantId);
    laptop = await ownerSide(client, owner.token, t.baseUrl);
    [x, y] = await Promise.all([pluginAgent(t, owner), pluginAgent(t, owner)]);
    tx = new ToolRuntime(parseConfig(x.env));
    ty = new ToolRuntime(parseConfig(y.env));
  });
  afterAll(async () => {
    await Promise.all([tx?.close(), ty?.close()]);
    await Promise.all([x?.stop(), y?.stop()]);
    laptop?.rt.close();
    await t?.close();
  });

  it('svc_send_message with only text goes to the owner', async () => {
    const sent = ok(await tx.call('svc_send_message', { text: 'report: all green' }));
    const conversation = await conversationOf(x.deviceId, laptop.od.device_id);
    expect(sent).toMatchObject({ conversation_id: conversation, channel_id: null, room_id: null, outcome: 'delivered', copies: [{ conversation_id: conversation, message_id: sent.message_id }] });
    const got = await waitFor(async () => laptop.received.find((m) => textOf(m) === 'report: all green'), 'the owner device decrypts it');
    expect(got).toMatchObject({ message_id: sent.message_id, sender_device_id: x.deviceId, conversation_id: conversation });
  });

  it('an owner device registered after the agent talks with it at once, and gets the owner’s copy too', async () => {
    const phone = await ownerSide(client, owner.token, t.baseUrl);
    try {
      const [conversation] = phone.od.conversations.filter((c) => c.agent_device_id === x.deviceId);
      await phone.messenger.sendText(conversation!.conversation_id, 'hello from the new phone');
      const page = await waitFor(async () => {
        const p = ok(await tx.call('svc_poll_messages', { conversationId: conversation!.conversation_id }));
        return p.count > 0 ? p : undefined;
      }, 'the agent reads the new device');
      expect(page.messages).toEqual([expect.objectContaining({ text: 'hello from the new phone', from: phone.od.device_id, conversation_id: conversation!.conversation_id, room_id: null })]);

      const sent = ok(await tx.call('svc_send_message', { text: 'to every owner device' }));
      expect(sent.copies.map((c: { conversation_id: string }) => c.conversation_id).sort()).toEqual(
        [conversation!.conversation_id, await conversationOf(x.deviceId, laptop.od.device_id)].sort(),
      );
      await waitFor(async () => [phone, laptop].every((s) => s.received.some((m) => textOf(m) === 'to every owner device')), 'both owner devices decrypt it');
      expect(x.runtime.ownerConversations()).toContain(conversation!.conversation_id);
    } finally {
      phone.rt.close();
    }
  });

  it('svc_send_message with roomId reaches the room’s members; svc_poll_messages with roomId reads a room', async () => {
    client.setOwnerDeviceId(laptop.od.device_id);
    const room = await client.createRoom({ name: 'ops', member_device_ids: [laptop.od.device_id, x.deviceId, y.deviceId] });
    const rooms = await RoomMessenger.open({ messenger: laptop.messenger, store: laptop.store, client, transport: restRoomTransport(client, laptop.od.device_id) });
    rooms.attach(laptop.rt, { transport: false });
    try {
      const sent = ok(await tx.call('svc_send_message', { text: 'room hello', roomId: room.room_id }));
      expect(sent).toMatchObject({ room_id: room.room_id, channel_id: null, conversation_id: null, outcome: 'delivered', protocol: 'ratchet' });
      expect(Object.fromEntries(sent.deliveries.map((d: { recipient_device_id: string; outcome: string }) => [d.recipient_device_id, d.outcome]))).toEqual({ [y.deviceId]: 'delivered', [laptop.od.device_id]: 'delivered' });

      const page = await waitFor(async () => {
        const p = ok(await ty.call('svc_poll_messages', { roomId: room.room_id }));
        return p.count > 0 ? p : undefined;
      }, 'the other agent reads the room');
      expect(page.messages).toEqual([expect.objectContaining({ message_id: sent.message_id, text: 'room hello', room_id: room.room_id, conversation_id: null, from: x.deviceId })]);
      await waitFor(async () => laptop.received.find((m) => m.room_id === room.room_id && textOf(m) === 'room hello'), 'the owner device decrypts the room message');

      ok(await ty.call('svc_send_message', { text: 'room answer', roomId: room.room_id, messageType: 'artifact' }));
      const back = await waitFor(async () => ok(await tx.call('svc_poll_messages', { roomId: room.room_id })).messages.find((m: { text: string }) => m.text === 'room answer'), 'the first agent reads the answer');
      expect(back).toMatchObject({ from: y.deviceId, message_type: 'artifact', room_id: room.room_id });
      // A room filter leaves out owner messages, and an owner filter leaves out rooms.
      expect(ok(await ty.call('svc_poll_messages', { roomId: room.room_id })).messages.every((m: { room_id: string }) => m.room_id === room.room_id)).toBe(true);
    } finally {
      await rooms.close();
    }
  });
});
