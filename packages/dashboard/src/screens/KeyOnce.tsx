/**
 * A secret shown once (contract §2.6; design §8.17: the raw API key is returned only by create and
 * rotate): a clearly marked box with the value, a Copy button and the warning that it will not be
 * shown again; "Done" hides it for good.
 */
import { useState } from 'react';
import { CopyButton } from '../components/ui';
import './forms.css';

/** The once-only secret box; hidden after "Done" (then `onDismiss`). Re-key it per secret. */
export function KeyOnce({ title, secret, onDismiss }: { title: string; secret: string; onDismiss?: () => void }) {
  const [dismissed, setDismissed] = useState(false);
  if (dismissed) return null;
  return (
    <div className="warning-banner stack key-once" role="region" aria-label={title}>
      <strong>{title}</strong>
      <code data-testid="secret-once">{secret}</code>
      <p>
        Copy it now: this key will not be shown again. Parley keeps only its hash; if it is lost, rotate the key.
      </p>
      <div className="row">
        <CopyButton text={secret} label="Copy key" />
        <button
          type="button"
          onClick={() => {
            setDismissed(true);
            onDismiss?.();
          }}
        >
          Done, I have stored it
        </button>
      </div>
    </div>
  );
}
