/**
 * The listener pipeline's policy steps (issue 42; pipeline.ts calls them, README.md steps 3c
 * and 4b): the engine's `connection` rules after PROXY in, its `handshake` rules after a TLS
 * termination, and `finish` (ended `connection`) when a connection is done.
 *
 * 1. A pass may hold a slot (in-flight of connections): kept on the connection
 *    (`c.policyHold`, holds of both points joined) and given back by `Connection.done`.
 * 2. A close (an answer is refused at these points by compile) closes the socket at once,
 *    nothing answered: a debug line and the access line (`policy_closed`, `policy`, `action`)
 *    name the rule.
 * 3. Nothing is made when no rule runs at the point (the caller checks `has`) or no policy
 *    observes ends (`observes`).
 */
import type { Logger } from 'pino';
import { finishContext } from '../policy/finish-context.ts';
import { joinHolds, type PolicyOutcome } from '../policy/outcome.ts';
import type { PolicySet } from '../policy/policy-set.ts';
import { clientText } from './client-address.ts';
import type { Connection } from './connection.ts';
import { connectionPoint, handshakePoint } from './connection-point.ts';

/** How a policy step refuses a connection: the pipeline's own refusal (one access line, slot back). */
export interface PolicyRefuser {
  refused(
    c: Connection,
    result: string,
    reason: string,
    protocol: string | undefined,
    client: string,
    fired: { readonly policy: string; readonly action: string },
  ): void;
}

/** Step 3c: false when a rule closed the connection. */
export function connectionStep(c: Connection, policies: PolicySet, refuser: PolicyRefuser, logger: Logger): boolean {
  const outcome = policies.connection(connectionPoint(c));
  if (outcome.verdict.action === 'pass') {
    c.policyHold = outcome;
    return true;
  }
  closedByPolicy(c, outcome, undefined, refuser, logger);
  return false;
}

/** Step 4b, on a terminated connection: false when a rule closed it. */
export function handshakeStep(c: Connection, policies: PolicySet, refuser: PolicyRefuser, logger: Logger): boolean {
  const outcome = policies.handshake(handshakePoint(c));
  if (outcome.verdict.action === 'pass') {
    c.policyHold = joinHolds(c.policyHold, outcome);
    return true;
  }
  closedByPolicy(c, outcome, 'tls', refuser, logger);
  return false;
}

/** The connection ended: the policies that observe ends are told (only when one does). */
export function connectionFinished(c: Connection): void {
  const policies = c.engine.policies;
  if (!policies.observes) return;
  const point = c.socket === c.raw ? connectionPoint(c) : handshakePoint(c);
  policies.finish(finishContext('connection', point.connection));
}

/** Step 2 of the header: the debug line, and the refusal naming the rule. */
function closedByPolicy(
  c: Connection,
  outcome: PolicyOutcome,
  protocol: string | undefined,
  refuser: PolicyRefuser,
  logger: Logger,
): void {
  const source = c.proxy?.command === 'proxy' ? c.proxy.source : undefined;
  const client = source === undefined ? clientText(c.ip, c.port) : clientText(source.ip, source.port);
  const rule = outcome.rule ?? '';
  logger.debug({ listener: c.listener.name, client, policy: rule, use: outcome.policy }, 'connection closed by policy');
  refuser.refused(c, 'policy_closed', `policy ${rule} (${outcome.policy ?? ''})`, protocol, client, {
    policy: rule,
    action: 'close',
  });
}
