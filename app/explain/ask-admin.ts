/**
 * `switchboard route --admin URL`: the question sent to a running router's `POST /explain`
 * (app/admin/ui-routes.ts), which answers on its live backend state (live.ts).
 *
 * 1. `URL` is the admin listener (`127.0.0.1:9901`, `http://host:9901`, or with a path prefix
 *    behind a proxy); `explain` is resolved under it. Not an http(s) URL: a usage error.
 * 2. The body is the command's flags as the dashboard's form sends them; the token goes as
 *    `Authorization: Bearer` (`--token`, else env SWITCHBOARD_ADMIN_TOKEN, as the admin reads it).
 * 3. The answer: 200 is the explanation (`text`, `explanation`, `exitCode`); 400 is the CLI's
 *    own usage error; anything else, or no answer within 10 s, is one line naming the URL and
 *    what went wrong (unreachable, token refused, not an admin listener).
 * Nothing here throws for a failed call: the caller turns each outcome into an exit code.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The deadline of the whole call. */
const TIMEOUT_MS = 10_000;
/** The largest answer read (an explanation is a few KiB). */
const MAX_BODY = 4 << 20;

/** The body of `POST /explain`: `switchboard route`'s flags as JSON. */
export interface ExplainQuestion {
  readonly host?: string | undefined;
  readonly path?: string | undefined;
  readonly method?: string | undefined;
  /** `NAME: VALUE` lines, as `--header`. */
  readonly headers?: readonly string[] | undefined;
  readonly client?: string | undefined;
  readonly sni?: string | undefined;
  /** Comma-separated, as `--alpn`. */
  readonly alpn?: string | undefined;
  readonly vip?: string | undefined;
  readonly listener?: string | undefined;
}

/** What the admin said, or why it said nothing usable. */
export type AdminOutcome =
  | { readonly kind: 'answer'; readonly exitCode: number; readonly text: string; readonly explanation: unknown }
  /** The router refused the question as the CLI would (exit 2). */
  | { readonly kind: 'usage'; readonly message: string }
  /** No usable answer (exit ROUTE_EXIT.admin): one line. */
  | { readonly kind: 'failed'; readonly message: string };

/** Step 1: the `POST /explain` URL under `admin`, or undefined when `admin` is not an http(s) URL. */
export function explainUrl(admin: string): URL | undefined {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(admin) ? admin : `http://${admin}`;
  let base: URL;
  try {
    base = new URL(text.endsWith('/') ? text : `${text}/`);
  } catch {
    return undefined;
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') return undefined;
  return new URL('explain', base);
}

interface Raw {
  readonly status: number;
  readonly body: string;
}

/** The answer, or why none came (one phrase). */
function post(url: URL, body: string, token: string | undefined): Promise<Raw | string> {
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  if (token !== undefined && token !== '') headers.authorization = `Bearer ${token}`;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let why: string | undefined;
    const fail = (reason: string) => {
      why ??= reason;
      req.destroy();
      resolve(why);
    };
    const req = send(url, { method: 'POST', headers, timeout: TIMEOUT_MS }, (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (text.length > MAX_BODY) fail(`the answer is larger than ${MAX_BODY >> 20} MiB`);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', (e: Error) => fail(e.message));
    });
    req.on('timeout', () => fail(`no answer within ${TIMEOUT_MS / 1000} s`));
    req.on('error', (e: NodeJS.ErrnoException) =>
      fail(
        // Closed before any answer: what the admin listener does over its connection caps.
        e.code === 'ECONNRESET'
          ? `${e.message} (closed unanswered: over admin.maxConnections or admin.maxConnectionsPerClient?)`
          : e.message,
      ),
    );
    req.end(body);
  });
}

/** The `message` of an admin refusal (`{ ok: false, error, message }`), else the status alone. */
function refusal(raw: Raw): { error: string; message: string } {
  try {
    const v = JSON.parse(raw.body) as { error?: unknown; message?: unknown };
    return { error: String(v.error ?? raw.status), message: String(v.message ?? '') };
  } catch {
    return { error: String(raw.status), message: raw.body.trim().slice(0, 200) };
  }
}

/** Step 3 for an answer that came. */
function outcomeOf(where: string, raw: Raw): AdminOutcome {
  if (raw.status === 200) {
    try {
      const v = JSON.parse(raw.body) as { exitCode?: unknown; text?: unknown; explanation?: unknown };
      if (typeof v.exitCode === 'number' && typeof v.text === 'string') {
        return { kind: 'answer', exitCode: v.exitCode, text: v.text, explanation: v.explanation };
      }
    } catch {}
    return {
      kind: 'failed',
      message: `admin ${where}: the answer is not an explanation (is it a Switchboard admin listener?)`,
    };
  }
  const r = refusal(raw);
  if (raw.status === 400) return { kind: 'usage', message: r.message.replace(/^route: /, '') };
  if (raw.status === 401) {
    return {
      kind: 'failed',
      message: `admin ${where}: the token was refused (401 ${r.error}): give --token or set SWITCHBOARD_ADMIN_TOKEN`,
    };
  }
  if (raw.status === 404) {
    return {
      kind: 'failed',
      message: `admin ${where}: no POST /explain here (404): is it the router's admin address?`,
    };
  }
  const why = r.message === '' ? '' : `: ${r.message}`;
  return { kind: 'failed', message: `admin ${where}: answered ${raw.status} ${r.error}${why}` };
}

/** Steps 1–3. `admin` is what `--admin` was given. */
export async function askAdmin(admin: string, token: string | undefined, q: ExplainQuestion): Promise<AdminOutcome> {
  const url = explainUrl(admin);
  if (url === undefined) return { kind: 'usage', message: `--admin ${JSON.stringify(admin)}: expected an http(s) URL` };
  const where = url.href;
  const raw = await post(url, JSON.stringify(q), token);
  if (typeof raw === 'string') return { kind: 'failed', message: `admin ${where}: cannot ask the router: ${raw}` };
  return outcomeOf(where, raw);
}
