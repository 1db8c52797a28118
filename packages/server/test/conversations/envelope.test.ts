/**
 * The shared envelope pipeline (lib/envelope.ts) and the send paths' fact cache
 * (lib/bounded-cache.ts): one envelope's checks in their order with the `{detail}` texts and
 * statuses every message path answers (400 naming the field, 413 over the ciphertext limit of
 * design §8.12), the encoding of stored blobs, and a cache that keeps what it loaded, drops the
 * oldest entry when full and does not keep misses.
 */
import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/lib/bounded-cache.js';
import { blobsOut, decodeEnvelope, encodeBlob } from '../../src/lib/envelope.js';
import { AppError } from '../../src/lib/errors.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The error `fn` throws, as an AppError's status and detail. */
function failure(fn: () => unknown): { status: number; detail: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return { status: (err as AppError).status, detail: (err as AppError).detail };
  }
  throw new Error('expected a failure');
}

describe('decodeEnvelope', () => {
  it('decodes both blobs; a ciphertext of exactly the limit passes', () => {
    const out = decodeEnvelope({ header_blob: b64('hdr'), ciphertext: b64('12345678') }, 8);
    expect(out.header.toString()).toBe('hdr');
    expect(out.ciphertext.toString()).toBe('12345678');
  });

  it('answers 413 over the limit, counting decoded bytes', () => {
    expect(failure(() => decodeEnvelope({ header_blob: '', ciphertext: b64('123456789') }, 8))).toEqual({ status: 413, detail: 'ciphertext exceeds 8 bytes' });
  });

  it('answers 400 naming the field, with the prefix of a listed envelope', () => {
    expect(failure(() => decodeEnvelope({ header_blob: 'abc', ciphertext: b64('x') }, 8))).toEqual({ status: 400, detail: 'header_blob must be base64' });
    expect(failure(() => decodeEnvelope({ header_blob: '', ciphertext: 'ab-_' }, 8))).toEqual({ status: 400, detail: 'ciphertext must be base64' });
    expect(failure(() => decodeEnvelope({ header_blob: '', ciphertext: 'ab-_' }, 8, 'envelopes[2].'))).toEqual({ status: 400, detail: 'envelopes[2].ciphertext must be base64' });
  });

  it('checks header_blob, then ciphertext, then the size', () => {
    expect(failure(() => decodeEnvelope({ header_blob: 'abc', ciphertext: 'ab-_' }, 8)).detail).toBe('header_blob must be base64');
    expect(failure(() => decodeEnvelope({ header_blob: 'abc', ciphertext: b64('123456789') }, 8)).status).toBe(400);
  });
});

describe('encodeBlob, blobsOut', () => {
  it('is base64 of the bytes, empty for a blob not kept', () => {
    expect(encodeBlob(Buffer.from('hdr'))).toBe(b64('hdr'));
    expect(encodeBlob(null)).toBe('');
    expect(encodeBlob(undefined)).toBe('');
  });

  it('maps a stored row to its two wire fields and round-trips decodeEnvelope', () => {
    const wire = blobsOut({ headerBlob: Buffer.from('hdr'), ciphertext: Buffer.from('ct') });
    expect(wire).toEqual({ header_blob: b64('hdr'), ciphertext: b64('ct') });
    const back = decodeEnvelope(wire, 8);
    expect([back.header.toString(), back.ciphertext.toString()]).toEqual(['hdr', 'ct']);
    expect(blobsOut({ headerBlob: null, ciphertext: null })).toEqual({ header_blob: '', ciphertext: '' });
  });
});

describe('BoundedCache', () => {
  it('loads a miss once, keeps what it found, and does not keep misses', async () => {
    const cache = new BoundedCache<string>(10);
    let loads = 0;
    const load = (value: string | undefined) => async () => {
      loads += 1;
      return value;
    };
    expect(await cache.through('a', load('A'))).toBe('A');
    expect(await cache.through('a', load('other'))).toBe('A');
    expect(await cache.through('b', load(undefined))).toBeUndefined();
    expect(await cache.through('b', load('B'))).toBe('B');
    expect(loads).toBe(3);
  });

  it('drops the oldest entry once full', () => {
    const cache = new BoundedCache<number>(2);
    cache.set('a', 1).set('b', 2).set('c', 3);
    expect([...cache.keys()]).toEqual(['b', 'c']);
  });
});
