/**
 * A lower message `seq` held hostage (the late-commit cursor tests: conversations.test.ts on one
 * instance, cluster-instances.test.ts across two): an open transaction on `client` inserts a
 * message of the conversation with the NEXT value of the `messages.seq` sequence, so the service's
 * insert that draws that value waits on the unique index until the transaction ends (roll it back
 * to let it through).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Agent, OwnerDevice } from './flows.js';

/** Begin a transaction on `client` and insert the hostage row (sender: the owner device, recipient: the agent). */
export async function holdNextMessageSeq(client: pg.Client, tenantId: string, od: OwnerDevice, agent: Agent): Promise<void> {
  await client.query('begin');
  const { rows } = await client.query(`select nextval(pg_get_serial_sequence('messages', 'seq'))::bigint + 1 as next`);
  await client.query(
    `insert into messages (id, seq, tenant_id, conversation_id, group_id, topic_id, sender_device_id, recipient_device_id, header_blob, ciphertext, message_type, priority)
     overriding system value values ($1, $2, $3, $4, $5, $6, $7, $8, '\\x00', '\\x00', 'text', 'normal')`,
    [randomUUID(), rows[0].next, tenantId, agent.conversationId, agent.groupId, agent.defaultTopicId, od.deviceId, agent.deviceId],
  );
}
