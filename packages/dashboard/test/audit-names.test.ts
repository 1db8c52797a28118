/**
 * Names next to the audit log's ids (lib/audit-names.ts): devices as agents or owner devices, hub
 * identities, API keys and invites by id, `device:` / `api_key:` / `invite:` actors, the signed-in
 * owner as "you", operators and other tenants in words, and nothing for what it does not know.
 */
import { describe, expect, it } from 'vitest';
import { auditLabel, auditNames } from '../src/lib/audit-names';

const AGENT = '00000000-0000-4000-8000-000000000001';
const PHONE = '00000000-0000-4000-8000-000000000002';
const HUB = '00000000-0000-4000-8000-000000000003';
const KEY = '00000000-0000-4000-8000-000000000004';
const INVITE = '00000000-0000-4000-8000-000000000005';
const UNKNOWN = '00000000-0000-4000-8000-0000000000ff';

const names = auditNames({
  devices: [
    { device_id: AGENT, name: 'research-bot', kind: 'agent' },
    { device_id: PHONE, name: 'Phone', kind: 'owner' },
    { device_id: UNKNOWN.replace('ff', 'fe'), name: '  ', kind: 'agent' },
  ],
  identities: [{ id: HUB, display_name: 'Research', hub_address: 'research' }],
  apiKeys: [{ id: KEY, name: 'ci' }],
  invites: [{ id: INVITE, label: 'laptop agent' }],
});
const self = { sub: 'ada@example.com', email: 'ada@example.com' };

describe('auditLabel', () => {
  it('names devices, hub identities, API keys and invites by id, bare or prefixed', () => {
    expect(auditLabel(names, AGENT)).toBe('agent research-bot');
    expect(auditLabel(names, `device:${AGENT}`)).toBe('agent research-bot');
    expect(auditLabel(names, `device:${PHONE}`)).toBe('owner device Phone');
    expect(auditLabel(names, HUB)).toBe('Research (research)');
    expect(auditLabel(names, `api_key:${KEY}`)).toBe('API key ci');
    expect(auditLabel(names, `invite:${INVITE}`)).toBe('invite laptop agent');
  });

  it('the signed-in owner is "you"; operators, other tenants and the service in words', () => {
    expect(auditLabel(names, 'ada@example.com', self)).toBe('you');
    expect(auditLabel(names, 'sub-123', { sub: 'sub-123', email: 'ada@example.com' })).toBe('you (ada@example.com)');
    expect(auditLabel(names, 'operator:ops@platform.test')).toBe('platform operator ops@platform.test');
    expect(auditLabel(names, `tenant:${UNKNOWN}`)).toBe('another tenant');
    expect(auditLabel(names, 'system')).toBe('the service');
  });

  it('nothing better than the raw value for what it does not know (blank names included)', () => {
    expect(auditLabel(names, UNKNOWN)).toBeUndefined();
    expect(auditLabel(names, `device:${UNKNOWN}`)).toBeUndefined();
    expect(auditLabel(names, UNKNOWN.replace('ff', 'fe'))).toBeUndefined();
    expect(auditLabel(names, 'someone-else@example.com', self)).toBeUndefined();
    expect(auditLabel(names, null)).toBeUndefined();
    expect(auditLabel(names, `api_key:${UNKNOWN}`)).toBe('an API key');
  });

  it('an empty set of lists (still loading) knows no ids', () => {
    expect(auditLabel(auditNames({}), AGENT)).toBeUndefined();
  });
});
