/**
 * decodeBase64 (lib/envelope.ts) accepts exactly the strings of the protocol's `Base64`
 * pattern whose length is a multiple of 4, and decodes them as Node does: it checks the decoded
 * length instead of running the pattern a second time.
 */
import { Base64 } from '@parley/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64 } from '../../src/lib/envelope.js';

const PATTERN = new RegExp(Base64.pattern!);
const accepts = (s: string) => {
  try {
    decodeBase64('f', s);
    return true;
  } catch {
    return false;
  }
};

describe('decodeBase64', () => {
  it('round-trips any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        expect(decodeBase64('f', Buffer.from(bytes).toString('base64')).equals(Buffer.from(bytes))).toBe(true);
      }),
    );
  });

  it('accepts exactly what the pattern accepts at a length that is a multiple of 4', () => {
    // Characters Node's decoder treats specially: padding, URL-safe letters, whitespace, others.
    const char = fc.constantFrom(...'aZ09+/=-_ \t\r\n$.é\u0000'.split(''));
    fc.assert(
      fc.property(fc.array(char, { maxLength: 16 }), fc.uint8Array({ maxLength: 12 }), (chars, prefix) => {
        const s = Buffer.from(prefix).toString('base64') + chars.join('');
        expect(accepts(s)).toBe(s.length % 4 === 0 && PATTERN.test(s));
      }),
      { numRuns: 20_000 },
    );
  });

  it('answers 400 naming the field', () => {
    expect(() => decodeBase64('ciphertext', 'ab-_')).toThrow(/ciphertext must be base64/);
    expect(() => decodeBase64('header_blob', 'abc')).toThrow(/header_blob must be base64/);
  });
});
