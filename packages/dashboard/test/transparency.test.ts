/**
 * The web app's transparency-log checks (lib/transparency.ts, design §8.33) against a fake service
 * serving the CT reference tree's checkpoints: the key pinned on first use, each checkpoint
 * verified against the one before (a grown log verifies; a rewritten, shrunk or foreign log and a
 * key that no longer signs do not), and the owner choosing to trust a new key.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { checkLog, localPinStore, trustNewKey, type LogClient } from '../src/lib/transparency';
import { CT_EMPTY_ROOT } from '@parley/sdk/testing';
import { consistency, keyAnswer, logKey } from './audit-log-fixture';

describe('transparency log checks', () => {
  beforeEach(() => localStorage.clear());

  it('pins the key and the checkpoint, then verifies that the log grew from it', async () => {
    const key = logKey();
    const client = {
      getAuditLogKey: vi.fn(async () => keyAnswer(key.vkey)),
      getAuditCheckpoint: vi.fn(async () => key.checkpoint(6)),
      getAuditConsistency: vi.fn(async (q: { first: number; second: number }) => consistency(q.first, q.second)),
      getAuditEventProof: vi.fn(),
    } as unknown as LogClient & { getAuditCheckpoint: ReturnType<typeof vi.fn> };
    const store = localPinStore('device-1');
    expect(await checkLog(client, store)).toEqual({ verified: true, treeSize: 6, timestamp: '2026-03-01T12:00:00.000Z', vkey: key.vkey, extends: null });
    expect(store.get()).toMatchObject({ vkey: key.vkey, treeSize: 6, origin: 'parley.test/audit/00000000-0000-4000-8000-0000000000e1' });
    expect(await checkLog(client, store)).toMatchObject({ verified: true, treeSize: 6, extends: 6 });
    client.getAuditCheckpoint.mockResolvedValue(key.checkpoint(8));
    expect(await checkLog(client, store)).toMatchObject({ verified: true, treeSize: 8, extends: 6 });
    expect(client.getAuditConsistency).toHaveBeenCalledWith({ first: 6, second: 8 });
    expect(localPinStore('device-2').get()).toBeNull();
  });

  it('reports a rewritten, shrunk or foreign log, and keeps the pin it had', async () => {
    const key = logKey();
    const store = localPinStore('device-1');
    const serve = (c: ReturnType<typeof key.checkpoint>, vkey = key.vkey) =>
      ({ getAuditLogKey: async () => keyAnswer(vkey), getAuditCheckpoint: async () => c, getAuditConsistency: async (q: { first: number; second: number }) => consistency(q.first, q.second) }) as unknown as LogClient;
    await checkLog(serve(key.checkpoint(8)), store);
    const rewritten = await checkLog(serve(key.checkpoint(8, '00'.repeat(32))), store);
    expect(rewritten).toMatchObject({ verified: false, reason: expect.stringMatching(/different roots/), newKey: null });
    expect(await checkLog(serve(key.checkpoint(7)), store)).toMatchObject({ verified: false, reason: expect.stringMatching(/fewer than the 8/) });
    const impostor = logKey();
    expect(await checkLog(serve(impostor.checkpoint(8), impostor.vkey), store)).toMatchObject({ verified: false, reason: expect.stringMatching(/signed by none/), newKey: impostor.vkey });
    expect(store.get()).toMatchObject({ vkey: key.vkey, treeSize: 8 });
    // The owner decides the new key is the operator's: it is pinned, and its checkpoints verify from then on.
    trustNewKey(store, impostor.vkey);
    expect(await checkLog(serve(impostor.checkpoint(8), impostor.vkey), store)).toMatchObject({ verified: true, treeSize: 8, extends: null });
    expect(store.get()).toMatchObject({ vkey: impostor.vkey, treeSize: 8 });
  });

  it('an empty log pinned first is extended by any later checkpoint, with no proof to ask for', async () => {
    const key = logKey();
    const store = localPinStore('device-1');
    const client = {
      getAuditLogKey: async () => keyAnswer(key.vkey),
      getAuditCheckpoint: vi.fn(async () => key.checkpoint(0, CT_EMPTY_ROOT)),
      getAuditConsistency: vi.fn(async () => consistency(0, 0)),
    };
    expect(await checkLog(client as unknown as LogClient, store)).toMatchObject({ verified: true, treeSize: 0 });
    client.getAuditCheckpoint.mockResolvedValue(key.checkpoint(5));
    expect(await checkLog(client as unknown as LogClient, store)).toMatchObject({ verified: true, treeSize: 5, extends: 0 });
    expect(client.getAuditConsistency).not.toHaveBeenCalled();
  });

  it('keeps trusting a pinned key while it still co-signs after a rotation', async () => {
    const key = logKey();
    const store = localPinStore('device-1');
    const next = logKey();
    const client = { getAuditLogKey: async () => keyAnswer(next.vkey, [key.vkey]), getAuditCheckpoint: async () => key.checkpoint(2), getAuditConsistency: async () => consistency(2, 2) } as unknown as LogClient;
    store.set({ vkey: key.vkey, origin: '', treeSize: 0, checkpoint: '' });
    expect(await checkLog(client, store)).toMatchObject({ verified: true, vkey: key.vkey });
  });
});
