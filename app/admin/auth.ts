/**
 * Admin authorisation for mutating endpoints (`POST /reload`):
 *
 * 1. The token is `admin.token` from the running config, else the `SWITCHBOARD_ADMIN_TOKEN`
 *    environment variable (read on every call, so a reload can change it).
 * 2. With a token set, a mutating call must carry `Authorization: Bearer <token>`.
 * 3. Without a token, mutating calls are allowed only on a loopback admin listener; anywhere else
 *    they answer 401 (there is nothing to check them against).
 */
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** The token in effect: config first, then the environment; '' when neither sets one. */
export function adminToken(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (configured !== undefined && configured !== '') return configured;
  return env.SWITCHBOARD_ADMIN_TOKEN ?? '';
}

/** Whether a mutating call with this `Authorization` header may proceed. */
export function authorised(authorization: string | undefined, token: string, loopback: boolean): boolean {
  if (token === '') return loopback;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (m === null) return false;
  const given = Buffer.from(m[1]!);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
