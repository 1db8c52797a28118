/**
 * Words for a decision's parts (contract §2.4 options and risk levels; design §8.19 auto actions).
 */
import type { AutoAction, DecisionOption } from '@parley/sdk';

/** The label of option `optionId` among `options` (contract §2.4), else the id itself; null when none. */
export function optionLabel(options: readonly DecisionOption[] | undefined, optionId: string | null | undefined): string | null {
  if (!optionId) return null;
  return options?.find((o) => o.option_id === optionId)?.label ?? optionId;
}

/** "approve “Deploy”" / "deny" — what fires when the deadline passes unanswered (design §8.19); "nothing" without one. */
export function autoActionText(auto: AutoAction | null, options: readonly DecisionOption[]): string {
  if (!auto) return 'nothing (the decision just expires)';
  const label = optionLabel(options, auto.option_id);
  return label ? `${auto.resolution} “${label}”` : auto.resolution;
}

/** Who answered (design §8.19): the deadline job, or the owner. */
export function answeredBy(by: string): string {
  return by.startsWith('system') ? 'the deadline' : 'owner';
}
