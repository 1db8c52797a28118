/**
 * An enrolled echo agent (`node/agent.ts`) for tests against a real server: enrolled with an
 * invite of `owner`, approved by it once its owner device's socket saw `device_pending`, and
 * started (MLS off), its state sealed under a key file beside its state directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ParleyClient } from '../src/client/rest.js';
import { enrollAgentDevice, startEchoAgent, type EchoAgent } from '../src/node/agent.js';
import { KeyFileSource } from '../src/node/sealing-keys.js';

/** Poll `get` every 20 ms until it answers a value; throws naming `what` after `timeoutMs`. */
async function until<T>(get: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Enroll, approve and start an echo agent of `owner` on the server at `baseUrl`; `ownerEvents`
 * are the socket events of one of the owner's devices (where `device_pending` arrives).
 * @returns the running agent, its state directory and `stop()` (stops it and removes its files).
 */
export async function enrolledEchoAgent(baseUrl: string, owner: ParleyClient, ownerEvents: readonly { event: string; data: any }[], prefix = 'parley-echo-'): Promise<{ agent: EchoAgent; stateDir: string; stop(): Promise<void> }> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const keyFile = () => new KeyFileSource(`${stateDir}.key`);
  const remove = () => {
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(`${stateDir}.key`, { force: true });
  };
  try {
    const invite = await owner.createInvite();
    const enrolling = enrollAgentDevice({ server: baseUrl, invite: invite.token, stateDir, protection: keyFile(), log: () => undefined, pollIntervalMs: 100, unsafeFastPolling: true, fsync: false });
    enrolling.catch(() => undefined);
    const pending = await until(() => ownerEvents.find((e) => e.event === 'device_pending')?.data, 'device_pending', 15_000);
    await owner.approveDevice(pending.device_id);
    await enrolling;
    const agent = await startEchoAgent({ stateDir, protection: keyFile(), mls: false, log: () => undefined, fsync: false });
    await agent.ready;
    return {
      agent,
      stateDir,
      async stop() {
        await agent.stop();
        remove();
      },
    };
  } catch (err) {
    remove();
    throw err;
  }
}
