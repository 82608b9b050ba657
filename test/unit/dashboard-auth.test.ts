/**
 * app/admin/auth.ts `shell` (issue 20): the dashboard's static files pass without the token but
 * keep every other rule — the Host check, the no-token-off-loopback rule, GET only — and a path
 * outside the shell list still needs the token.
 */
import { describe, expect, it } from 'vitest';
import { type AdminPolicy, refusal } from '../../app/admin/auth.ts';
import { SHELL_PATHS } from '../../app/admin/ui-routes.ts';

const policy = (over: Partial<AdminPolicy> = {}): AdminPolicy => ({
  token: 's3cret',
  loopback: true,
  address: '127.0.0.1:9901',
  open: ['/healthz', '/readyz'],
  allowedHosts: [],
  shell: SHELL_PATHS,
  ...over,
});

const req = (path: string, host = '127.0.0.1:9901', method = 'GET') => ({
  method,
  path,
  headers: { host: [host] } as NodeJS.Dict<string[]>,
});

describe('dashboard shell policy', () => {
  it('lists the page and its shipped files only', () => {
    expect(SHELL_PATHS).toEqual(
      expect.arrayContaining(['/ui', '/ui/', '/ui/index.html', '/ui/main.js', '/ui/style.css']),
    );
    expect(SHELL_PATHS).not.toContain('/ui/data');
    expect(SHELL_PATHS.every((p) => p === '/ui' || /^\/ui\/([a-z0-9-]+\.(html|js|css|svg))?$/.test(p))).toBe(true);
  });

  it('the shell passes without the token; data paths do not', () => {
    for (const p of ['/ui', '/ui/', '/ui/main.js']) expect(refusal(req(p), policy()), p).toBeUndefined();
    for (const p of ['/ui/data', '/routes', '/ui/unknown.js'])
      expect(refusal(req(p), policy())?.code, p).toBe('unauthorized');
  });

  it('the shell keeps the Host check and the no-token-off-loopback rule, and is GET only', () => {
    expect(refusal(req('/ui/', 'evil.test:9901'), policy())?.code).toBe('host_not_allowed');
    expect(refusal(req('/ui/', '10.0.0.5:9901'), policy({ token: '', loopback: false }))?.code).toBe('unauthorized');
    const post = {
      ...req('/ui/', '127.0.0.1:9901', 'POST'),
      headers: { host: ['127.0.0.1:9901'], 'content-type': ['application/json'] },
    };
    expect(refusal(post, policy())?.code).toBe('unauthorized');
  });
});
