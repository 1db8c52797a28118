/**
 * The conversation's protection badge: post-quantum for PQXDH (Signal PQXDH rev. 3) and MLS with
 * the hybrid X-Wing ciphersuite (RFC 9420), classical for X3DH and other MLS suites, nothing
 * before the first session.
 */
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ProtectionBadge } from '../src/components/ProtectionBadge';

afterEach(cleanup);

describe('ProtectionBadge', () => {
  it.each([
    [{ scheme: 'pqxdh', post_quantum: true }, 'Post-quantum (PQXDH)', 'good'],
    [{ scheme: 'mls-hybrid', post_quantum: true, ciphersuite: 'MLS_256_XWING_CHACHA20POLY1305_SHA512_Ed25519' }, 'Post-quantum (MLS X-Wing)', 'good'],
    [{ scheme: 'x3dh', post_quantum: false }, 'Classical (X3DH)', 'warn'],
    [{ scheme: 'mls-classical', post_quantum: false, ciphersuite: 'MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519' }, 'Classical (MLS)', 'warn'],
  ] as const)('%o reads %s', (protection, text, tone) => {
    render(<ProtectionBadge protection={protection} />);
    const badge = screen.getByTestId('protection');
    expect(badge.textContent).toBe(text);
    expect(badge.getAttribute('data-post-quantum')).toBe(String(protection.post_quantum));
    expect(badge.querySelector(`.badge-${tone}`)?.getAttribute('aria-label')).toBe(`session keys: ${text}`);
  });

  it('shows nothing before the first session', () => {
    render(<ProtectionBadge protection={undefined} />);
    expect(screen.queryByTestId('protection')).toBeNull();
  });
});
