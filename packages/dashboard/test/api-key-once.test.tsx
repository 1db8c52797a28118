/**
 * The once-only key box (screens/KeyOnce.tsx; contract §2.6, design §8.17: the raw API key appears
 * only in the answer of create and rotate): the key and the "not shown again" warning are
 * visible, with a Copy button, and "Done" hides it.
 */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyOnce } from '../src/screens/KeyOnce';

const KEY = `svc_agent_sk_dev_${'ab'.repeat(32)}`;

afterEach(cleanup);

describe('KeyOnce', () => {
  it('shows the key once with the warning, copies it, and hides it when dismissed', async () => {
    const onDismiss = vi.fn();
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    render(<KeyOnce title='New key "ci" (dev)' secret={KEY} onDismiss={onDismiss} />);
    const box = screen.getByRole('region', { name: 'New key "ci" (dev)' });
    expect(screen.getByText(KEY)).toBeTruthy();
    expect(box.textContent).toMatch(/will not be shown again/);
    fireEvent.click(screen.getByRole('button', { name: 'Copy key' }));
    expect(writeText).toHaveBeenCalledWith(KEY);
    await screen.findByRole('button', { name: 'Copied' });
    fireEvent.click(screen.getByRole('button', { name: 'Done, I have stored it' }));
    expect(screen.queryByText(KEY)).toBeNull();
    expect(screen.queryByText(/will not be shown again/)).toBeNull();
    expect(onDismiss).toHaveBeenCalledOnce();
  });
});
