/**
 * The command an owner runs on the agent's machine to enroll it with a fresh invite: the
 * repository's agent CLI (`npm run agent -- enroll`, README "A real agent against a running
 * server") with the invite token, this service's URL, the invite's label as the agent's name, and
 * its state directory and sealing key file in the user's home, outside any working tree.
 */

/** POSIX shell single-quoting: `'…'`, with each `'` written as `'\''`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A file-name-safe slug of a label (lowercase letters, digits and dashes; `agent` when empty). */
export function slugOf(label: string | null | undefined): string {
  const slug = (label ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return slug || 'agent';
}

/**
 * The enroll command for `invite` against `server` (the web app's origin).
 * @param invite the raw `svc_tok_…` token and the invite's optional label.
 * @param server base URL of the service, e.g. `http://127.0.0.1:8080`.
 */
export function enrollCommand(invite: { token: string; label?: string | null }, server: string): string {
  const slug = slugOf(invite.label);
  const name = invite.label?.trim() ? ` --name ${shellQuote(invite.label.trim())}` : '';
  return (
    `npm run agent -- enroll --invite ${shellQuote(invite.token)} --server ${shellQuote(server)}${name}` +
    ` --state-dir ~/.local/state/parley/${slug} --key-file ~/.config/parley/${slug}.key`
  );
}
