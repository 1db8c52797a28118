/**
 * The platform operator screen (docs/decisions.md "Platform operators and operator tier grants"):
 * for an owner whose identity-provider subject is in `PLATFORM_OPERATOR_SUBS` (`GET /me`
 * `operator`, kept on the owner runtime), two views: certification review (`/operator`) and
 * dispute resolution (`/operator/disputes`). Disputes are listed only on their own view, since
 * every listing is recorded in the parties' audit logs. Other owners get a sentence saying what
 * the page is for; the navigation does not offer it to them.
 */
import { NavLink, useParams } from 'react-router';
import { useOwner } from '../../app/owner-context';
import { Certification } from './Certification';
import { OperatorDisputes } from './Disputes';

/** The current view's link in bold (it also carries `aria-current="page"`). */
const current = ({ isActive }: { isActive: boolean }) => (isActive ? { fontWeight: 600 } : undefined);

/** The operator screen; `:view` is `disputes` or absent (certification review). */
export function Operator() {
  const owner = useOwner();
  const { view } = useParams();
  if (!owner.operator) {
    return (
      <>
        <h1>Platform operator</h1>
        <p>This page is for platform operators: owners whose sign-in subject the service lists in PLATFORM_OPERATOR_SUBS.</p>
      </>
    );
  }
  return (
    <>
      <h1>Platform operator</h1>
      <nav aria-label="Operator views" className="row">
        <NavLink to="/operator" end style={current}>
          Certification review
        </NavLink>
        <NavLink to="/operator/disputes" style={current}>
          Disputes
        </NavLink>
      </nav>
      {view === 'disputes' ? <OperatorDisputes /> : <Certification />}
    </>
  );
}
