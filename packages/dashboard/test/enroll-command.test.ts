/**
 * The enroll command the invite panel shows (lib/enroll-command.ts): token, server, name from the
 * label, state and key file outside the working tree, safe to paste into a POSIX shell.
 */
import { describe, expect, it } from 'vitest';
import { enrollCommand, shellQuote, slugOf } from '../src/lib/enroll-command';

const TOKEN = `svc_tok_${'ab'.repeat(32)}`;

describe('enrollCommand', () => {
  it('names the token, the server and the label, with state and key under the home directory', () => {
    expect(enrollCommand({ token: TOKEN, label: 'Build bot' }, 'http://127.0.0.1:8080')).toBe(
      `npm run agent -- enroll --invite '${TOKEN}' --server 'http://127.0.0.1:8080' --name 'Build bot'` +
        ' --state-dir ~/.local/state/parley/build-bot --key-file ~/.config/parley/build-bot.key',
    );
  });

  it('leaves the name out without a label and quotes what a shell would read', () => {
    const cmd = enrollCommand({ token: TOKEN, label: null }, 'https://parley.example');
    expect(cmd).not.toContain('--name');
    expect(cmd).toContain('--state-dir ~/.local/state/parley/agent ');
    expect(shellQuote(`it's; rm -rf /`)).toBe(`'it'\\''s; rm -rf /'`);
    expect(slugOf(' ../../Étoile  bot! ')).toBe('toile-bot');
  });
});
