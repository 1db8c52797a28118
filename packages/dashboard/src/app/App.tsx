/**
 * Routes of the owners' web app. Screens load on demand (one chunk each), so the first paint
 * ships only the shell, sign-in and the SDK core.
 */
import { lazy, Suspense, type ComponentType } from 'react';
import { BrowserRouter, Navigate, Route, Routes, useLocation } from 'react-router';
import { rememberReturn } from '../lib/auth';
import { describeError, Loading } from '../components/ui';
import { SignIn, OidcCallback } from '../screens/SignIn';
import { Layout } from './Layout';
import { OwnerProvider, useAuth } from './owner-context';

function screen<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) {
  return lazy(async () => ({ default: (await load())[name] }));
}

const Agents = screen(() => import('../screens/Agents'), 'Agents');
const Conversations = screen(() => import('../screens/Conversations'), 'Conversations');
const Rooms = screen(() => import('../screens/Rooms'), 'Rooms');
const Decisions = screen(() => import('../screens/Decisions'), 'Decisions');
const Trust = screen(() => import('../screens/Trust'), 'Trust');
const Shadow = screen(() => import('../screens/Shadow'), 'Shadow');
const Telemetry = screen(() => import('../screens/Telemetry'), 'Telemetry');
const Spend = screen(() => import('../screens/Spend'), 'Spend');
const ApiKeys = screen(() => import('../screens/ApiKeys'), 'ApiKeys');
const Policies = screen(() => import('../screens/Policies'), 'Policies');
const Audit = screen(() => import('../screens/Audit'), 'Audit');
const Marketplace = screen(() => import('../screens/Marketplace'), 'Marketplace');
const RentAgent = screen(() => import('../screens/market/Browse'), 'RentAgent');
const RentalRoom = screen(() => import('../screens/market/RentalRoom'), 'RentalRoom');
const Settings = screen(() => import('../screens/Settings'), 'Settings');
const Operator = screen(() => import('../screens/operator/Operator'), 'Operator');

/** Signed-in pages: sign-in first, then wait for the owner runtime (tenant, device, socket). */
function RequireOwner() {
  const { session, runtime, bootError, signOut } = useAuth();
  const location = useLocation();
  if (!session) {
    rememberReturn(location.pathname + location.search);
    return <Navigate to="/sign-in" replace />;
  }
  if (bootError !== undefined) {
    return (
      <main className="sign-in" id="main">
        <h1>Parley could not start</h1>
        <p className="error" role="alert">
          {describeError(bootError)}
        </p>
        <button type="button" onClick={signOut}>
          Back to sign-in
        </button>
      </main>
    );
  }
  if (!runtime) {
    return (
      <main className="sign-in" id="main">
        <Loading what="Setting up this browser as your owner device" />
      </main>
    );
  }
  return <Layout />;
}

export function App() {
  return (
    <BrowserRouter>
      <OwnerProvider>
        <Suspense fallback={<Loading />}>
          <Routes>
            <Route path="/sign-in" element={<SignIn />} />
            <Route path="/auth/callback" element={<OidcCallback />} />
            <Route element={<RequireOwner />}>
              <Route index element={<Navigate to="/agents" replace />} />
              <Route path="/agents" element={<Agents />} />
              <Route path="/conversations" element={<Conversations />} />
              <Route path="/conversations/:conversationId" element={<Conversations />} />
              <Route path="/rooms" element={<Rooms />} />
              <Route path="/rooms/:roomId" element={<Rooms />} />
              <Route path="/decisions" element={<Decisions />} />
              <Route path="/trust" element={<Trust />} />
              <Route path="/trust/:agentId" element={<Trust />} />
              <Route path="/shadow" element={<Shadow />} />
              <Route path="/telemetry" element={<Telemetry />} />
              <Route path="/spend" element={<Spend />} />
              <Route path="/spend/:agentId" element={<Spend />} />
              <Route path="/api-keys" element={<ApiKeys />} />
              <Route path="/policies" element={<Policies />} />
              <Route path="/audit" element={<Audit />} />
              <Route path="/marketplace" element={<Marketplace />} />
              <Route path="/marketplace/browse" element={<RentAgent />} />
              <Route path="/marketplace/rentals/:rentalId" element={<RentalRoom />} />
              <Route path="/settings" element={<Settings />} />
              <Route path="/operator/:view?" element={<Operator />} />
              <Route path="*" element={<p>This page does not exist.</p>} />
            </Route>
          </Routes>
        </Suspense>
      </OwnerProvider>
    </BrowserRouter>
  );
}
