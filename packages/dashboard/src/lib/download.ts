/**
 * Save text as a file from the page (the compliance report of contract §4.12, design §8.14): a Blob
 * behind an object URL, clicked through a temporary `<a download>`, then released.
 */

/** Download `text` as `filename` with media type `type`. */
export function downloadText(filename: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A file name part from free text: lowercase letters, digits and hyphens. */
export function fileSafe(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'agent';
}
