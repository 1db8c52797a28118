/**
 * React access to the signed-in owner: `useOwner()` gives the {@link OwnerRuntime} (REST client,
 * messenger, socket), `useAuth()` the sign-in actions. The provider starts the runtime after
 * sign-in, invalidates queries on socket events (`live.ts`), and on a 401 anywhere (or a socket
 * refused with 4401) ends the session and sends the owner to sign-in, remembering the page.
 */
import { ParleyApiError } from '@parley/sdk';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { clearSession, loadSession, rememberReturn, saveSession, type AuthSession } from '../lib/auth';
import { rootsForEvent } from '../lib/live';
import type { OwnerRuntime } from '../lib/owner';

export interface AuthState {
  session: AuthSession | undefined;
  runtime: OwnerRuntime | undefined;
  /** Starting the runtime failed. */
  bootError: unknown;
  /** Socket state (`connecting`, `open`, `reconnecting`, …). */
  socket: string;
  /** Why the owner was sent back to sign-in, when it happened. */
  expired: boolean;
  signIn(session: AuthSession): void;
  signOut(): void;
  /** The session ended (401): back to sign-in, keeping drafts and the page. */
  expire(): void;
  /** Last messenger/socket warning. */
  warning: string | undefined;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

/** The sign-in state. @throws Error outside the provider. */
export function useAuth(): AuthState {
  const a = useContext(AuthContext);
  if (!a) throw new Error('useAuth outside OwnerProvider');
  return a;
}

/** The signed-in owner's runtime. @throws Error when not signed in (screens render only after boot). */
export function useOwner(): OwnerRuntime {
  const r = useAuth().runtime;
  if (!r) throw new Error('useOwner before sign-in');
  return r;
}

export function OwnerProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<AuthSession | undefined>(() => loadSession());
  const [runtime, setRuntime] = useState<OwnerRuntime | undefined>();
  const [bootError, setBootError] = useState<unknown>();
  const [socket, setSocket] = useState('idle');
  const [expired, setExpired] = useState(false);
  const [warning, setWarning] = useState<string>();
  const expireRef = useRef<() => void>(() => undefined);
  const hadSession = useRef(false);

  const queryClient = useMemo(() => {
    const onError = (err: unknown) => {
      if (err instanceof ParleyApiError && err.status === 401) expireRef.current();
    };
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: { queries: { retry: (n, err) => !(err instanceof ParleyApiError && err.status < 500) && n < 2, staleTime: 5_000 } },
    });
  }, []);

  const expire = useCallback(() => {
    rememberReturn(location.pathname + location.search);
    clearSession();
    setExpired(true);
    setSession(undefined);
  }, []);
  expireRef.current = expire;

  const signIn = useCallback((s: AuthSession) => {
    saveSession(s);
    setExpired(false);
    setBootError(undefined);
    setSession(s);
  }, []);

  const signOut = useCallback(() => {
    clearSession();
    setExpired(false);
    setSession(undefined);
  }, []);

  // Start the runtime for the session; stop it when the session ends.
  useEffect(() => {
    if (!session) {
      setRuntime(undefined);
      // Signed out: forget the previous owner's data (not on the first render: the sign-in page's own query runs then).
      if (hadSession.current) queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth-config' });
      return;
    }
    hadSession.current = true;
    let stopped = false;
    let started: OwnerRuntime | undefined;
    const timer = setTimeout(expire, Math.max(0, session.expiresAt - Date.now()));
    // The end-to-end runtime (SDK crypto, MLS) loads after sign-in: the sign-in page stays small.
    import('../lib/owner')
      .then(({ OwnerRuntime }) =>
        OwnerRuntime.start(session, {
          onEvent: (event) => {
            for (const root of rootsForEvent(event)) void queryClient.invalidateQueries({ queryKey: [root] });
          },
          onState: (s) => {
            setSocket(s);
            if (s === 'unauthorized') expireRef.current();
          },
          onWarning: setWarning,
        }),
      )
      .then(
        (rt) => {
          if (stopped) return rt.close();
          started = rt;
          setRuntime(rt);
        },
        (err: unknown) => {
          if (stopped) return;
          if (err instanceof ParleyApiError && err.status === 401) expireRef.current();
          else setBootError(err);
        },
      );
    return () => {
      stopped = true;
      clearTimeout(timer);
      started?.close();
    };
  }, [session, queryClient, expire]);

  const value: AuthState = { session, runtime, bootError, socket, expired, signIn, signOut, expire, warning };
  return (
    <AuthContext.Provider value={value}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </AuthContext.Provider>
  );
}
