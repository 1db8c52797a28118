/**
 * The contract §2.4 content cards of the Conversations screen: a decision request lists its options
 * with their risk levels and answers with the chosen one (once), alerts show their severity, a
 * decision answer reads as answered, artifacts show their content, a non-envelope shows as text.
 */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ContentCard } from '../src/components/ContentCard';

afterEach(cleanup);

const request = {
  type: 'decision_request' as const,
  payload: {
    title: 'Deploy release 42?',
    options: [
      { option_id: 'deploy', label: 'Deploy now', risk_level: 'high' as const },
      { option_id: 'wait', label: 'Wait', risk_level: 'low' as const, is_default: true },
    ],
  },
};

describe('ContentCard', () => {
  it('answers a decision request with the chosen option, and shows the choice once answered', () => {
    const onAnswer = vi.fn();
    const { rerender } = render(<ContentCard content={request} onAnswer={onAnswer} />);
    expect(screen.getByRole('group', { name: 'Decision request: Deploy release 42?' })).toBeTruthy();
    expect(screen.getByText('high risk')).toBeTruthy();
    expect(screen.getByText('Wait (default)')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Choose Deploy now' }));
    expect(onAnswer).toHaveBeenCalledWith('deploy');
    rerender(<ContentCard content={request} onAnswer={onAnswer} answered="deploy" />);
    expect(screen.queryByRole('button', { name: /Choose/ })).toBeNull();
    expect(screen.getByText('chosen')).toBeTruthy();
  });

  it('renders alerts by severity, answers, artifacts and plain text', () => {
    render(<ContentCard content={{ type: 'status_alert', payload: { title: 'Disk full', severity: 'critical', message: '98% used' } }} />);
    const alert = screen.getByRole('group', { name: 'Status alert: Disk full' });
    expect(alert.querySelector('.badge-bad')?.textContent).toBe('critical');
    cleanup();
    render(<ContentCard content={{ type: 'action_confirmation', payload: { action: 'decision', status: 'success', detail: 'chose "Wait"', option_id: 'wait', in_reply_to: 'm1' } as never }} />);
    expect(screen.getByText('Decision answered')).toBeTruthy();
    cleanup();
    render(<ContentCard content={{ type: 'artifact', payload: { type: 'report', title: 'Weekly', content: 'all good', format: 'text' } }} />);
    expect(screen.getByText('all good').tagName).toBe('PRE');
    cleanup();
    render(<ContentCard content={undefined} text="not an envelope" />);
    expect(screen.getByText('not an envelope')).toBeTruthy();
  });
});
