/**
 * The signed-in frame: a skip link, the navigation (one link per screen; the platform operator
 * screen for operators only), who is signed in, this browser's owner-device fingerprint and the
 * socket state, the key-transparency alerts (design §8.39), and the current screen.
 */
import { NavLink, Outlet } from 'react-router';
import { useAuth, useOwner } from './owner-context';
import { Badge } from '../components/ui';
import { KeyAlertBanner } from './KeyAlertBanner';

export const NAV: { to: string; label: string }[] = [
  { to: '/agents', label: 'Agents & devices' },
  { to: '/conversations', label: 'Conversations' },
  { to: '/rooms', label: 'Rooms' },
  { to: '/decisions', label: 'Decisions' },
  { to: '/trust', label: 'Trust' },
  { to: '/shadow', label: 'Shadow sessions' },
  { to: '/telemetry', label: 'Telemetry' },
  { to: '/spend', label: 'Spend' },
  { to: '/api-keys', label: 'API keys' },
  { to: '/policies', label: 'Policies' },
  { to: '/audit', label: 'Audit log' },
  { to: '/marketplace', label: 'Marketplace' },
  { to: '/settings', label: 'Settings' },
];

/** The platform operator's entry, shown only when the service says the owner is one (`GET /me` `operator`). */
export const OPERATOR_NAV = { to: '/operator', label: 'Platform operator' };

export function Layout() {
  const { session, signOut, socket, warning } = useAuth();
  const owner = useOwner();
  const tone = socket === 'open' ? 'good' : socket === 'revoked' || socket === 'unauthorized' ? 'bad' : 'warn';
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <strong className="brand">Parley</strong>
        <span className="who">
          {session?.email ?? session?.sub}
          {session?.provider === 'dev' && <Badge tone="warn">development sign-in</Badge>}
        </span>
        <span className="device" title="This browser's owner device: compare with what an agent shows">
          This browser: <code data-testid="owner-fingerprint">{owner.fingerprint}</code>
        </span>
        <Badge tone={tone} label={`live connection ${socket}`}>
          {socket}
        </Badge>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Screens" className="side">
        <ul>
          {(owner.operator ? [...NAV, OPERATOR_NAV] : NAV).map((n) => (
            <li key={n.to}>
              <NavLink to={n.to}>{n.label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        <KeyAlertBanner />
        {warning && (
          <p className="notice" role="status">
            {warning}
          </p>
        )}
        <Outlet />
      </main>
    </div>
  );
}
