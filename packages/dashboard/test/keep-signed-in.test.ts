/**
 * "Keep me signed in on this browser" (lib/auth.ts): without it the session is this tab's
 * (`sessionStorage`); with it the session is kept in `localStorage` (a new tab, or the browser
 * after the tab closed, finds it); sign-out and expiry forget both; an expired or unreadable kept
 * session is dropped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clearSession, loadSession, saveSession, type AuthSession } from '../src/lib/auth';

const KEY = 'parley.session';
const NOW = Date.parse('2026-03-01T12:00:00Z');
const session = (over: Partial<AuthSession> = {}): AuthSession => ({ token: 'a.b.c', expiresAt: NOW + 3_600_000, sub: 'ada@example.com', provider: 'dev', ...over });

afterEach(() => {
  sessionStorage.clear();
  localStorage.clear();
});

describe('keep me signed in', () => {
  it('off: the tab keeps the session, the browser does not', () => {
    saveSession(session());
    expect(loadSession(NOW)).toEqual(session());
    expect(localStorage.getItem(KEY)).toBeNull();
    sessionStorage.clear(); // the tab closed
    expect(loadSession(NOW)).toBeUndefined();
  });

  it('on: the session survives the tab and is found by a new one', () => {
    saveSession(session({ persistent: true }));
    expect(sessionStorage.getItem(KEY)).toBeNull();
    sessionStorage.clear();
    expect(loadSession(NOW)).toEqual(session({ persistent: true }));
  });

  it('choosing again moves the session: only one copy is kept', () => {
    saveSession(session({ persistent: true }));
    saveSession(session({ token: 'x.y.z' }));
    expect(localStorage.getItem(KEY)).toBeNull();
    expect(loadSession(NOW)?.token).toBe('x.y.z');
    saveSession(session({ token: 'k.k.k', persistent: true }));
    expect(sessionStorage.getItem(KEY)).toBeNull();
    expect(loadSession(NOW)?.token).toBe('k.k.k');
  });

  it('sign-out forgets it in the tab and on the browser', () => {
    saveSession(session({ persistent: true }));
    sessionStorage.setItem(KEY, JSON.stringify(session()));
    clearSession();
    expect(sessionStorage.getItem(KEY)).toBeNull();
    expect(localStorage.getItem(KEY)).toBeNull();
    expect(loadSession(NOW)).toBeUndefined();
  });

  it('an expired or unreadable kept session is dropped', () => {
    saveSession(session({ persistent: true, expiresAt: NOW - 1 }));
    expect(loadSession(NOW)).toBeUndefined();
    expect(localStorage.getItem(KEY)).toBeNull();
    localStorage.setItem(KEY, '{not json');
    expect(loadSession(NOW)).toBeUndefined();
    expect(localStorage.getItem(KEY)).toBeNull();
  });
});
