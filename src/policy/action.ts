/** A rule's `action:` compiled once: close, or a frozen answer. */

import type { ActionConfig } from '../config/policies.ts';
import type { RuleAction } from '../contracts/policy.ts';
import { makeAnswer } from './answer.ts';

const CLOSE: RuleAction = Object.freeze({ action: 'close' });

/** The compiled action of `action: close` or `action: { respond: … }`. */
export function ruleAction(config: ActionConfig): RuleAction {
  if (config === 'close') return CLOSE;
  const respond = config.respond;
  const parts = typeof respond === 'number' ? { status: respond } : respond;
  return Object.freeze({ action: 'answer', answer: makeAnswer(parts) });
}
