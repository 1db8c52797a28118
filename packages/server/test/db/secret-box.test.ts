/**
 * Secrets at rest (src/lib/secret-box.ts, modules/webhooks/secrets.ts): AES-256-GCM round trip in
 * the `v1:<iv>:<ciphertext+tag>` format, a fresh IV per seal; a tampered IV, ciphertext or tag, a
 * wrong key, a wrong context and malformed values all throw; the key comes from SECRETS_KEY or is
 * generated once in DATA_DIR; legacy clear `whsec_` webhook secrets are still read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { SecretBox, SecretBoxError, decodeSecretsKey, loadSecretsKey } from '../../src/lib/secret-box.js';
import { newWebhookSecret, openWebhookSecret, sealWebhookSecret } from '../../src/modules/webhooks/secrets.js';

const box = new SecretBox(randomBytes(32));
const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'parley-secret-box-'));

/** Flip one bit of byte `at` (negative: from the end) of the base64 part `part` (1 = iv, 2 = body). */
function flip(sealed: string, part: 1 | 2, at: number): string {
  const parts = sealed.split(':');
  const bytes = Buffer.from(parts[part]!, 'base64');
  const i = at < 0 ? bytes.length + at : at;
  bytes[i] = bytes[i]! ^ 0x01;
  parts[part] = bytes.toString('base64');
  return parts.join(':');
}

describe('SecretBox', () => {
  it('round-trips in the v1 format with a fresh IV per seal, and never contains the plaintext', () => {
    const secret = newWebhookSecret();
    const a = box.seal(secret, 'ctx');
    const b = box.seal(secret, 'ctx');
    expect(a).toMatch(/^v1:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain(secret.slice('whsec_'.length));
    expect(box.open(a, 'ctx')).toBe(secret);
    expect(box.open(b, 'ctx')).toBe(secret);
    expect(box.open(box.seal(''))).toBe('');
    expect(box.open(box.seal('ünïcødé ✓'))).toBe('ünïcødé ✓');
    expect(SecretBox.isSealed(a)).toBe(true);
    expect(SecretBox.isSealed(secret)).toBe(false);
  });

  it('throws on a tampered IV, ciphertext or tag', () => {
    const sealed = box.seal('whsec_abc', 'ctx');
    for (const tampered of [flip(sealed, 1, 0), flip(sealed, 2, 0), flip(sealed, 2, -1), flip(sealed, 2, -16)]) {
      expect(() => box.open(tampered, 'ctx')).toThrow(SecretBoxError);
    }
  });

  it('throws with a wrong key or a wrong context', () => {
    const sealed = box.seal('whsec_abc', 'device-a');
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'device-a')).toThrow(SecretBoxError);
    expect(() => box.open(sealed, 'device-b')).toThrow(SecretBoxError);
    expect(() => box.open(sealed)).toThrow(SecretBoxError);
  });

  it('throws on malformed values and refuses keys that are not 32 bytes', () => {
    for (const bad of ['', 'whsec_abc', 'v1:', 'v1:abc', 'v1:::', `v1:${randomBytes(12).toString('base64')}:${randomBytes(8).toString('base64')}`, 'v2:a:b']) {
      expect(() => box.open(bad), bad).toThrow(SecretBoxError);
    }
    expect(() => new SecretBox(randomBytes(16))).toThrow(RangeError);
    expect(() => decodeSecretsKey(randomBytes(31).toString('base64'))).toThrow(RangeError);
    expect(() => decodeSecretsKey('not base64 at all!!')).toThrow(RangeError);
  });
});

describe('secrets key', () => {
  it('SECRETS_KEY (base64 of 32 bytes) is used as given; a malformed one is a ConfigError that does not echo it', () => {
    const key = randomBytes(32);
    const dir = tmpDir();
    expect(loadSecretsKey(key.toString('base64'), dir).equals(key)).toBe(true);
    expect(fs.existsSync(path.join(dir, 'secrets-key'))).toBe(false);
    expect(loadConfig({ SECRETS_KEY: key.toString('base64') }).secretsKey).toBe(key.toString('base64'));
    expect(loadConfig({}).secretsKey).toBeUndefined();
    const bad = randomBytes(20).toString('base64');
    expect(() => loadConfig({ SECRETS_KEY: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRETS_KEY: bad })).not.toThrow(bad);
  });

  it('without SECRETS_KEY, a key is generated once in DATA_DIR/secrets-key (mode 0600) and reused', () => {
    const dir = path.join(tmpDir(), 'nested');
    const first = loadSecretsKey(undefined, dir);
    expect(first).toHaveLength(32);
    const file = path.join(dir, 'secrets-key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadSecretsKey(undefined, dir).equals(first)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['secrets-key']); // no temporary file left behind
    fs.writeFileSync(file, 'short');
    expect(() => loadSecretsKey(undefined, dir)).toThrow(RangeError);
  });
});

describe('webhook secrets at rest', () => {
  it('seal per device, open only for that device, and read legacy clear whsec_ values', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const sealed = sealWebhookSecret(box, 'device-a', secret);
    expect(sealed).toMatch(/^v1:/);
    expect(openWebhookSecret(box, 'device-a', sealed)).toBe(secret);
    expect(() => openWebhookSecret(box, 'device-b', sealed)).toThrow(SecretBoxError);
    expect(openWebhookSecret(box, 'device-a', secret)).toBe(secret);
    expect(() => openWebhookSecret(box, 'device-a', 'something else')).toThrow(SecretBoxError);
  });
});
