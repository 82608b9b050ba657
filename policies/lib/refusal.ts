/**
 * How a refusing policy refuses at its point: the rule's `action:`, else its default (close at
 * `connection`/`handshake`, where no HTTP answer is possible; the given answer at request
 * points). The compile step has refused an answer at the connection points.
 */
import type { PolicyAnswer, PolicyPoint, PolicyVerdict, RuleAction } from '../../src/contracts/policy.ts';

/** The close verdict, shared. */
export const CLOSE: PolicyVerdict = Object.freeze({ action: 'close' });

/** The verdict of a refusal: the rule's action, or close / `answer` by point. */
export function refusalOf(action: RuleAction | undefined, point: PolicyPoint, answer: PolicyAnswer): PolicyVerdict {
  if (action !== undefined) return action;
  if (point === 'connection' || point === 'handshake') return CLOSE;
  return Object.freeze({ action: 'answer', answer });
}
