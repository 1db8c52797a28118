/** Structured content types (contract §2.4): encode validates, decode validates and explains. */
import { describe, expect, it } from 'vitest';
import {
  CONTENT_TYPES,
  ContentValidationError,
  decodeContent,
  encodeContent,
  isContent,
  validateContent,
  type ContentPayloads,
  type ContentType,
} from '../src/content/types.js';

const valid: { [K in ContentType]: ContentPayloads[K] } = {
  decision_request: {
    title: 'Deploy v2 to production?',
    description: 'All checks green',
    options: [
      { option_id: 'go', label: 'Deploy', risk_level: 'high', is_default: true },
      { option_id: 'wait', label: 'Wait', risk_level: 'low' },
    ],
    deadline: '2026-01-31T12:00:00Z',
    auto_action: { resolution: 'deny', option_id: 'wait' },
  },
  status_alert: { title: 'CPU high', message: 'load 12', severity: 'warning', detail: '{"load":12}', detailFormat: 'json', category: 'performance' },
  action_confirmation: { action: 'restart service', status: 'success', detail: 'restarted in 2 s' },
  artifact: { type: 'report', title: 'Weekly report', content: '# Report', format: 'markdown' },
  heartbeat: { agent_status: 'busy', current_task: 'indexing' },
  text: { text: 'héllo ✓' },
};

function issuesOf(fn: () => unknown): ContentValidationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ContentValidationError);
    return err as ContentValidationError;
  }
  throw new Error('expected a ContentValidationError');
}

describe('content types', () => {
  it('round-trips every type through UTF-8 JSON {type, payload}', () => {
    expect(CONTENT_TYPES.sort()).toEqual(Object.keys(valid).sort());
    for (const type of CONTENT_TYPES) {
      const bytes = encodeContent(type, valid[type] as never);
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual({ type, payload: valid[type] });
      expect(decodeContent(bytes)).toEqual({ type, payload: valid[type] });
    }
  });

  it('decodes a string plaintext too, and narrows by type', () => {
    const c = decodeContent(JSON.stringify({ type: 'decision_request', payload: valid.decision_request }));
    if (c.type !== 'decision_request') throw new Error('wrong type');
    expect(c.payload.options.map((o) => o.option_id)).toEqual(['go', 'wait']);
  });

  it('accepts minimal payloads (only required fields)', () => {
    expect(() => encodeContent('decision_request', { title: 't', options: [{ option_id: 'a', label: 'A', risk_level: 'low' }] })).not.toThrow();
    expect(() => encodeContent('status_alert', { title: 't', severity: 'info' })).not.toThrow();
    expect(() => encodeContent('heartbeat', { agent_status: 'idle', current_task: null })).not.toThrow();
  });

  it('keeps unknown extra fields (forward compatibility)', () => {
    const c = decodeContent(JSON.stringify({ type: 'heartbeat', payload: { agent_status: 'idle', uptime_s: 5 }, v: 2 }));
    expect((c.payload as Record<string, unknown>).uptime_s).toBe(5);
  });

  it('encode refuses an invalid payload before producing bytes', () => {
    const e = issuesOf(() => encodeContent('decision_request', { title: '', options: [] } as never));
    expect(e.contentType).toBe('decision_request');
    expect(e.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/payload/title', '/payload/options']));
    expect(e.message).toMatch(/invalid "decision_request" content: \/payload\/title/);
  });

  it('names the failing field of a nested option', () => {
    const e = issuesOf(() =>
      encodeContent('decision_request', { title: 't', options: [{ option_id: 'a', label: 'A', risk_level: 'extreme' }] } as never),
    );
    expect(e.issues.some((i) => i.path === '/payload/options/0/risk_level')).toBe(true);
  });

  it('checks enum fields of status_alert and action_confirmation', () => {
    expect(issuesOf(() => encodeContent('status_alert', { title: 't', severity: 'fatal' } as never)).issues[0]!.path).toBe('/payload/severity');
    expect(issuesOf(() => encodeContent('status_alert', { title: 't', severity: 'info', detailFormat: 'html' } as never)).issues[0]!.path).toBe('/payload/detailFormat');
    expect(issuesOf(() => encodeContent('action_confirmation', { action: 'x', status: 'done' } as never)).issues[0]!.path).toBe('/payload/status');
    expect(issuesOf(() => encodeContent('artifact', { type: 'code', title: 'x' } as never)).issues[0]!.path).toBe('/payload/content');
  });

  it('applies the decision rules a schema cannot express', () => {
    const opt = (id: string, d?: boolean) => ({ option_id: id, label: id, risk_level: 'low' as const, ...(d === undefined ? {} : { is_default: d }) });
    expect(issuesOf(() => encodeContent('decision_request', { title: 't', options: [opt('a'), opt('a')] })).issues[0]!.message).toMatch(/duplicate option_id/);
    expect(issuesOf(() => encodeContent('decision_request', { title: 't', options: [opt('a', true), opt('b', true)] })).issues[0]!.message).toMatch(/at most one/);
    expect(issuesOf(() => encodeContent('decision_request', { title: 't', options: [opt('a')], auto_action: { resolution: 'approve' } })).issues[0]!.message).toMatch(
      /needs a deadline/,
    );
    expect(
      issuesOf(() =>
        encodeContent('decision_request', { title: 't', options: [opt('a')], deadline: '2026-01-01T00:00:00Z', auto_action: { resolution: 'approve', option_id: 'zz' } }),
      ).issues[0]!.path,
    ).toBe('/payload/auto_action/option_id');
    expect(issuesOf(() => encodeContent('decision_request', { title: 't', options: [opt('a')], deadline: 'tomorrow' })).issues[0]!.path).toBe('/payload/deadline');
    for (const bad of ['2026-02-30T10:00:00Z', '2026-01-01T25:00:00Z', '2026-01-01T10:00:00']) {
      expect(issuesOf(() => encodeContent('decision_request', { title: 't', options: [opt('a')], deadline: bad })).issues[0]!.path).toBe('/payload/deadline');
    }
  });

  it('decode explains malformed plaintexts clearly', () => {
    expect(issuesOf(() => decodeContent(new Uint8Array([0xff, 0xfe]))).message).toMatch(/not valid UTF-8/);
    expect(issuesOf(() => decodeContent('{not json')).message).toMatch(/not JSON/);
    expect(issuesOf(() => decodeContent('[]')).message).toMatch(/must be an object/);
    expect(issuesOf(() => decodeContent('{"payload":{}}')).message).toMatch(/missing "type"/);
    expect(issuesOf(() => decodeContent('{"type":"poem","payload":{}}')).message).toMatch(/unknown content type "poem"; expected one of/);
    expect(issuesOf(() => decodeContent('{"type":"text"}')).message).toMatch(/payload must be an object/);
    expect(issuesOf(() => decodeContent('{"type":"text","payload":{"text":5}}')).issues[0]!.path).toBe('/payload/text');
  });

  it('isContent and validateContent agree', () => {
    expect(isContent({ type: 'text', payload: { text: 'x' } })).toBe(true);
    expect(isContent({ type: 'text', payload: {} })).toBe(false);
    expect(validateContent({ type: 'heartbeat', payload: { agent_status: 'ok' } }).type).toBe('heartbeat');
  });
});
