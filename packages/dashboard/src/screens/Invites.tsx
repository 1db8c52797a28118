/**
 * Invites (contract §2.2, §3.2, §4.2): create one (the raw `svc_tok_…` token is shown once, with a
 * copy button and a QR code for an agent's camera), list them, revoke an active one.
 */
import type { CreatedInvite } from '@parley/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import QRCode from 'qrcode';
import { enrollCommand } from '../lib/enroll-command';
import { useEffect, useState, type FormEvent } from 'react';
import { useOwner } from '../app/owner-context';
import { useDraft } from '../lib/drafts';
import { useRootMutation } from '../lib/mutate';
import { Badge, ConfirmButton, CopyButton, Empty, ErrorNote, Head, Loading, Section, Time } from '../components/ui';

/** The QR code of an invite token as an image (a data: URL; the CSP allows `img-src data:`). */
export function TokenQr({ token }: { token: string }) {
  const [src, setSrc] = useState<string>();
  useEffect(() => {
    let live = true;
    void QRCode.toDataURL(token, { errorCorrectionLevel: 'M', margin: 1, width: 192 }).then((url) => live && setSrc(url));
    return () => {
      live = false;
    };
  }, [token]);
  return src ? <img className="qr" src={src} alt="QR code of the invite token" /> : null;
}

function NewInvite({ invite, onDone }: { invite: CreatedInvite; onDone: () => void }) {
  return (
    <div className="card" role="region" aria-label="New invite token">
      <p>
        <strong>Give this token to the agent now.</strong> It is shown only once, works once, and expires <Time iso={invite.expires_at} />.
      </p>
      <code data-testid="invite-token">{invite.token}</code>
      <p>On the agent's machine, from a clone of the repository (`npm ci` first):</p>
      <code data-testid="invite-command">{enrollCommand(invite, location.origin)}</code>
      <div className="row">
        <CopyButton text={invite.token} label="Copy token" />
        <CopyButton text={enrollCommand(invite, location.origin)} label="Copy command" />
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      <TokenQr token={invite.token} />
    </div>
  );
}

/** Whether the new invite's token no longer works (consumed by an agent's enrollment, revoked or expired). */
function usedUp(created: CreatedInvite, listed: readonly { id: string; status: string }[] | undefined): boolean {
  const now = listed?.find((i) => i.id === created.id);
  return now !== undefined && now.status !== 'active';
}

export function Invites() {
  const { client } = useOwner();
  const qc = useQueryClient();
  const invites = useQuery({ queryKey: ['invites'], queryFn: () => client.listInvites() });
  const [label, setLabel, clearLabel] = useDraft('invites.label');
  const [created, setCreated] = useState<CreatedInvite>();
  const create = useMutation({
    mutationFn: () => client.createInvite(label.trim() ? { label: label.trim() } : {}),
    onSuccess: (inv) => {
      setCreated(inv);
      clearLabel();
      void qc.invalidateQueries({ queryKey: ['invites'] });
    },
  });
  const revoke = useRootMutation('invites', (id: string) => client.revokeInvite(id));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title="Invites">
      <form className="inline" onSubmit={submit}>
        <label htmlFor="invite-label">Label (optional)</label>
        <input id="invite-label" value={label} maxLength={200} onChange={(e) => setLabel(e.target.value)} />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create invite
        </button>
      </form>
      <ErrorNote error={create.error} />
      {created && !usedUp(created, invites.data?.invites) && <NewInvite invite={created} onDone={() => setCreated(undefined)} />}
      <ErrorNote error={invites.error ?? revoke.error} />
      {invites.isPending ? (
        <Loading />
      ) : invites.data && invites.data.invites.length === 0 ? (
        <Empty>No invites yet.</Empty>
      ) : (
        <table>
          <Head columns={['Label', 'Status', 'Created', 'Expires', 'Actions']} />
          <tbody>
            {invites.data?.invites.map((i) => (
              <tr key={i.id}>
                <td>{i.label ?? <span className="muted">—</span>}</td>
                <td>
                  <Badge tone={i.status === 'active' ? 'info' : i.status === 'consumed' ? 'good' : 'neutral'}>{i.status}</Badge>
                </td>
                <td>
                  <Time iso={i.created_at} />
                </td>
                <td>
                  <Time iso={i.expires_at} />
                </td>
                <td>{i.status === 'active' && <ConfirmButton label="Revoke" onConfirm={() => revoke.mutate(i.id)} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
