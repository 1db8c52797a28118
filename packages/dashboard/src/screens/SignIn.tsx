/**
 * Sign-in (design §8.31): on the embedded default a form that signs in as an
 * e-mail address, clearly marked development only; with `OIDC_*` a button that starts the
 * authorization code flow with PKCE; `/auth/callback` finishes it. Either way "Keep me signed in
 * on this browser" (off by default) keeps the session after the tab closes (lib/auth.ts).
 */
import { ParleyClient, type AuthConfig } from '@parley/sdk';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { useAuth } from '../app/owner-context';
import { devSignIn, finishOidc, startOidc, takeReturn } from '../lib/auth';
import { useDraft } from '../lib/drafts';
import { ErrorNote, Loading } from '../components/ui';

function publicClient(): ParleyClient {
  return new ParleyClient({ baseUrl: location.origin });
}

/** The "Keep me signed in on this browser" checkbox (lib/auth.ts `persistent`). */
function KeepSignedIn({ checked, onChange }: { checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <div className="stack">
      <label className="row" style={{ fontWeight: 400, gap: '0.4rem' }}>
        <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
        Keep me signed in on this browser
      </label>
      <p className="muted" style={{ margin: 0 }}>
        Off: closing this tab signs you out. On: you stay signed in on this browser until the session expires or you sign out; use it only on your own computer.
      </p>
    </div>
  );
}

function useAuthConfig() {
  return useQuery({ queryKey: ['auth-config'], queryFn: () => publicClient().authConfig(), staleTime: Infinity });
}

export function SignIn() {
  const { signIn, expired, session } = useAuth();
  const navigate = useNavigate();
  const config = useAuthConfig();
  const [email, setEmail] = useDraft('sign-in.email');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [keep, setKeep] = useState(false);

  useEffect(() => {
    if (session) navigate(takeReturn(), { replace: true });
  }, [session, navigate]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const s = await devSignIn(publicClient(), email.trim());
      signIn(keep ? { ...s, persistent: true } : s);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in" id="main">
      <h1>Parley</h1>
      <p className="muted">Approve your agents, talk to them end to end, and govern them.</p>
      {expired && (
        <p className="notice" role="status">
          Your session ended. Sign in again to continue where you were; what you typed is kept.
        </p>
      )}
      {config.isPending && <Loading />}
      <ErrorNote error={config.error} />
      {config.data?.mode === 'dev' && (
        <form onSubmit={submit} className="card" aria-labelledby="dev-title">
          <h2 id="dev-title">Development sign-in</h2>
          <p className="warning-banner" role="note">
            Development only: this server uses its built-in identity provider, and anyone who can reach it can sign in as any address.
            Configure an OIDC provider (<code>OIDC_ISSUER</code>) for real use.
          </p>
          {!config.data.dev_login && <p className="error">This server does not listen on a loopback address, so development sign-in is refused.</p>}
          <label htmlFor="email">E-mail address</label>
          <input id="email" name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <KeepSignedIn checked={keep} onChange={setKeep} />
          <button type="submit" className="primary" disabled={busy || !config.data.dev_login}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
          <ErrorNote error={error} />
        </form>
      )}
      {config.data?.mode === 'oidc' && config.data.oidc && <OidcButton oidc={config.data.oidc} keep={keep} onKeep={setKeep} />}
    </main>
  );
}

function OidcButton({ oidc, keep, onKeep }: { oidc: NonNullable<AuthConfig['oidc']>; keep: boolean; onKeep: (on: boolean) => void }) {
  const [error, setError] = useState<unknown>();
  return (
    <div className="card">
      <h2>Sign in</h2>
      <KeepSignedIn checked={keep} onChange={onKeep} />
      <button type="button" className="primary" onClick={() => startOidc(oidc, keep).catch(setError)}>
        Sign in with {new URL(oidc.issuer).host}
      </button>
      <ErrorNote error={error} />
    </div>
  );
}

/** `/auth/callback`: the OIDC provider's redirect back. */
export function OidcCallback() {
  const { signIn, session } = useAuth();
  const navigate = useNavigate();
  const config = useAuthConfig();
  const [error, setError] = useState<unknown>();
  const started = useRef(false);
  useEffect(() => {
    const oidc = config.data?.oidc;
    // The code is single use: exchange it once.
    if (!oidc || started.current) return;
    started.current = true;
    finishOidc(oidc, new URL(location.href)).then(signIn, setError);
  }, [config.data, signIn]);
  useEffect(() => {
    if (session) navigate(takeReturn(), { replace: true });
  }, [session, navigate]);
  return (
    <main className="sign-in" id="main">
      <h1>Signing in…</h1>
      <ErrorNote error={error ?? config.error} />
      {error !== undefined && <a href="/sign-in">Back to sign-in</a>}
    </main>
  );
}
