/**
 * How a conversation's end-to-end session was keyed, as a badge (the SDK's
 * `SecureMessenger.protection`): post-quantum — PQXDH (Signal PQXDH rev. 3) or MLS (RFC 9420)
 * with the hybrid X-Wing ciphersuite — or classical (X3DH, or another MLS ciphersuite). Nothing
 * before the conversation's first session.
 */
import type { ConversationProtection, ProtectionScheme } from '@parley/sdk';
import { Badge } from './ui';

const LABELS: Record<ProtectionScheme, string> = {
  pqxdh: 'Post-quantum (PQXDH)',
  'mls-hybrid': 'Post-quantum (MLS X-Wing)',
  x3dh: 'Classical (X3DH)',
  'mls-classical': 'Classical (MLS)',
};

/** The badge of `protection`, or nothing when the conversation has no session yet. */
export function ProtectionBadge({ protection }: { protection: ConversationProtection | undefined }) {
  if (!protection) return null;
  const text = LABELS[protection.scheme];
  return (
    <span data-testid="protection" data-post-quantum={protection.post_quantum}>
      <Badge tone={protection.post_quantum ? 'good' : 'warn'} label={`session keys: ${text}`}>
        {text}
      </Badge>
    </span>
  );
}
