/**
 * The audit log's verifier against a running service (design §8.33): the REST client's calls
 * (log key, checkpoint, event proof, consistency), their answers verified by the SDK with the key
 * alone, and the offline CLI (`npm run -s audit-log -- verify-inclusion | verify-consistency`) on
 * the saved answers: exit 0 when the proof holds, 1 when it does not (an edited event, a changed
 * proof byte, a checkpoint from another tenant), 2 on usage errors.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvite, newOwner, startApp, type TestApp } from '@parley/server/testing';
import { ParleyApiError } from '../src/client/errors.js';
import { ParleyClient } from '../src/client/rest.js';
import { verifyCheckpoint, verifyCheckpointConsistency, verifyEventProof } from '../src/audit-log/verify.js';
import { main } from '../src/node/audit-cli.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('audit log verification through the SDK', () => {
  let t: TestApp;
  let owner: ParleyClient;
  let tenantId: string;
  let dir: string;
  const save = (name: string, value: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.length ? JSON.parse(out.join('\n')) : undefined, err: err.join('\n') };
  };

  beforeAll(async () => {
    t = await startApp({ listen: true });
    const o = await newOwner(t);
    tenantId = o.tenantId;
    owner = new ParleyClient({ baseUrl: t.baseUrl, ownerToken: o.token });
    owner.setTenantId(tenantId);
    for (let i = 0; i < 3; i++) await createInvite(t, o);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-audit-cli-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the checkpoint, every event and the log growing, with the key fetched once', async () => {
    const { vkey } = await new ParleyClient({ baseUrl: t.baseUrl }).getAuditLogKey();
    const first = await owner.getAuditCheckpoint();
    expect(verifyCheckpoint(first.checkpoint, vkey, { tenantId }).treeSize).toBe(first.tree_size);
    const { events } = await owner.listAuditEvents();
    for (const e of events) expect(verifyEventProof(await owner.getAuditEventProof(e.event_id), vkey, { tenantId }).eventHash).toBe(e.hash);
    await owner.createInvite({});
    const second = await owner.getAuditCheckpoint();
    const proof = await owner.getAuditConsistency({ first: first.tree_size, second: second.tree_size });
    expect(verifyCheckpointConsistency(first.checkpoint, second.checkpoint, proof, vkey).newer.treeSize).toBe(first.tree_size + 1);
    const atFirst = await owner.getAuditEventProof(events[0]!.event_id, { tree_size: first.tree_size });
    expect(atFirst.checkpoint).toBe(first.checkpoint);
    const refused = await owner.getAuditConsistency({ first: 0, second: second.tree_size }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ParleyApiError);
    expect((refused as ParleyApiError).status).toBe(400);
  });

  it('the CLI verifies saved answers offline and says when they do not hold', async () => {
    const key = await owner.getAuditLogKey();
    const vkeyFile = save('vkey.txt', `${key.vkey}\n`);
    const older = await owner.getAuditCheckpoint();
    const { events } = await owner.listAuditEvents();
    const bundle = await owner.getAuditEventProof(events.at(-1)!.event_id);
    await owner.createInvite({});
    const newer = await owner.getAuditCheckpoint();
    const consistency = await owner.getAuditConsistency({ first: older.tree_size, second: newer.tree_size });

    const ok = await cli('verify-inclusion', '--proof', save('proof.json', bundle), '--vkey', key.vkey, '--tenant', tenantId);
    expect(ok).toMatchObject({ code: 0, out: { valid: true, event_id: bundle.event_id, leaf_index: bundle.leaf_index, checkpoint: { tenant_id: tenantId, tree_size: older.tree_size } } });
    // The vkey from a file; the checkpoints as saved answers or as bare notes.
    const grown = await cli('verify-consistency', '--old', save('old.json', older), '--new', save('new.txt', newer.checkpoint), '--proof', save('consistency.json', consistency), '--vkey', vkeyFile);
    expect(grown).toMatchObject({ code: 0, out: { valid: true, old: { tree_size: older.tree_size }, new: { tree_size: newer.tree_size } } });

    const edited = await cli('verify-inclusion', '--proof', save('edited.json', { ...bundle, event: { ...bundle.event, actor: 'mallory' } }), '--vkey', key.vkey);
    expect(edited).toMatchObject({ code: 1, out: { valid: false, code: 'event_mismatch' } });
    const flipped = Buffer.from(consistency.proof[0]!, 'base64');
    flipped[0]! ^= 0x80;
    const badProof = await cli('verify-consistency', '--old', save('old2.json', older), '--new', save('new2.json', newer), '--proof', save('bad.json', { ...consistency, proof: [flipped.toString('base64'), ...consistency.proof.slice(1)] }), '--vkey', key.vkey);
    expect(badProof).toMatchObject({ code: 1, out: { valid: false, code: 'consistency_failed' } });
    const swapped = await cli('verify-consistency', '--old', save('old3.json', newer), '--new', save('new3.json', older), '--proof', save('c3.json', consistency), '--vkey', key.vkey);
    expect(swapped.code).toBe(1);
    const otherTenant = await cli('verify-inclusion', '--proof', save('p4.json', bundle), '--vkey', key.vkey, '--tenant', '00000000-0000-4000-8000-000000000000');
    expect(otherTenant).toMatchObject({ code: 1, out: { code: 'bad_signature' } });
    const notAProof = await cli('verify-inclusion', '--proof', save('p5.json', { hello: 'world' }), '--vkey', key.vkey);
    expect(notAProof).toMatchObject({ code: 1, out: { valid: false } });

    expect((await cli('verify-inclusion', '--proof', save('p6.json', bundle))).code).toBe(2);
    expect((await cli('verify-everything', '--proof', save('p7.json', bundle), '--vkey', key.vkey)).code).toBe(2);
    expect((await cli('verify-inclusion', '--proof', path.join(dir, 'missing.json'), '--vkey', key.vkey)).code).toBe(2);
  });

  it('runs as `npm run -s audit-log`', { timeout: 60_000 }, async () => {
    const key = await owner.getAuditLogKey();
    const { events } = await owner.listAuditEvents();
    const file = save('npm-proof.json', await owner.getAuditEventProof(events[0]!.event_id));
    const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'audit-log', '--', 'verify-inclusion', '--proof', file, '--vkey', key.vkey], { cwd: REPO_ROOT });
    expect(JSON.parse(stdout.trim())).toMatchObject({ valid: true, event_id: events[0]!.event_id });
  });
});
