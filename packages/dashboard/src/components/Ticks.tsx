/**
 * Message ticks, as every messenger shows them: a clock while sending, one tick
 * once the service stored the message, two once the recipient device received it, two blue ones
 * once it read it, a warning sign when the send failed. The words are the accessible name (and
 * the tooltip, with the time when known).
 */
import type { MessageStatus } from '@parley/sdk';

const LOOK: Record<MessageStatus, { glyph: string; label: string }> = {
  pending: { glyph: '🕓', label: 'Sending' },
  sent: { glyph: '✓', label: 'Sent' },
  delivered: { glyph: '✓✓', label: 'Delivered' },
  read: { glyph: '✓✓', label: 'Read' },
  failed: { glyph: '⚠', label: 'Not sent' },
};

/** The ticks of one message's status (nothing without a status); `at` adds the time to the tooltip. */
export function Ticks({ status, at }: { status: MessageStatus | undefined; at?: string | undefined }) {
  if (!status) return null;
  const { glyph, label } = LOOK[status];
  const title = at ? `${label} ${new Date(at).toLocaleString()}` : label;
  return (
    <span className={`ticks ticks-${status}`} role="img" aria-label={label} title={title} data-testid="ticks" data-status={status}>
      {glyph}
    </span>
  );
}
