/**
 * Diagnostics channels (STYLE §10): every channel Switchboard publishes, in one table. Metrics,
 * tests and users subscribe with `node:diagnostics_channel`; publishers check `hasSubscribers`
 * first, so an unobserved channel costs one property read.
 *
 * | channel                          | message                                                  |
 * |----------------------------------|----------------------------------------------------------|
 * | switchboard:connection:accept    | { listener, socket }                                     |
 * | switchboard:route:decided        | { request, candidates, socket? } (candidates undefined = no route) |
 * | switchboard:upstream:connect     | { backend, attempt, ok, latencyMs, error?, exhausted? }  |
 * | switchboard:request:end          | { record } one per HTTP/1 request (per-request mode) or HTTP/2 stream |
 * | switchboard:connection:end       | { record } the access record of a finished connection    |
 * | switchboard:reload               | { ok, changed, version, errors, trigger }                |
 * | switchboard:acme:issued          | { listener, name, result: 'ok' | 'failed', error? } one per ACME order |
 * | switchboard:acme:storage         | { listener, name?, op: 'probe' | 'save', error } one per failed ACME storage probe or save |
 *
 * Channels are process-wide: two routers in one process publish on the same channels.
 */
import { channel } from 'node:diagnostics_channel';

export const channels = {
  accept: channel('switchboard:connection:accept'),
  routeDecided: channel('switchboard:route:decided'),
  upstreamAttempt: channel('switchboard:upstream:attempt'),
  upstreamConnect: channel('switchboard:upstream:connect'),
  requestEnd: channel('switchboard:request:end'),
  connectionEnd: channel('switchboard:connection:end'),
  reload: channel('switchboard:reload'),
  acmeIssued: channel('switchboard:acme:issued'),
  acmeStorage: channel('switchboard:acme:storage'),
} as const;

/** The channel names, for README and subscribers. */
export const CHANNEL_NAMES = Object.fromEntries(Object.entries(channels).map(([k, c]) => [k, c.name])) as Record<
  keyof typeof channels,
  string | symbol
>;
