/**
 * `GET /config`: the effective config (defaults applied, each plugin's options parsed by its own
 * schema) with secrets redacted. It fails closed: three rules, applied together, and a value any
 * one of them flags is hidden.
 *
 * 1. **Schema.** A field whose zod schema carries `.meta({ writeOnly: true })` is a secret
 *    (`admin.token`; a plugin marks its own the same way). `writeOnly` is JSON Schema's own
 *    word for "sent, never read back", so the generated JSON Schema stays standard. The value
 *    is walked beside the core schema and beside each plugin's options schema.
 * 2. **Names**, everywhere, schema or not (a plugin schema that forgot `writeOnly` must not
 *    leak `dbPassword`): a key whose lower-cased name *contains* `pass`, `pwd`, `secret`,
 *    `token`, `key`, `auth`, `credential`, `bearer` or `sig` marks its value secret: a string or
 *    number is replaced, an array or object is walked with every leaf under it hidden (a map's
 *    key over an object value is data, a cluster called `auth`, and marks nothing). Only a
 *    schema can lift this: a field whose values it fixes (enum, literal, boolean) or one it
 *    marks `notSecret` (src/config/not-secret.ts: a certificate's `key` path, a hash `key`).
 * 3. **Values**, anywhere, whatever the key: the password of a URL (parsed as the WHATWG URL
 *    parser does, so `http://u:p@ss@h` loses `p@ss`), query parameters and libpq
 *    `keyword=value` pairs whose name matches rule 2 (`?key=`, `&sig=`, `password=`), the
 *    credential of `Bearer …` / `Basic …`, and a string holding PEM material
 *    (`-----BEGIN … PRIVATE KEY-----`, replaced whole). Hosts, ports and paths stay.
 *
 * A redacted string becomes `"<redacted>"`; an empty one stays empty (it shows that none is set).
 */
import type { z } from 'zod';
import { isMarkedNotSecret } from '../../src/config/not-secret.ts';
import { configSchema } from '../../src/config/schema.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';

export const REDACTED = '<redacted>';

/** Names that mark a secret, matched anywhere in a key, query parameter or libpq keyword. */
const SECRET_NAME = /pass|pwd|secret|token|key|auth|credential|bearer|sig/i;

/** `Authorization`-style credentials: the scheme stays, what follows it goes. */
const AUTH_SCHEME = /\b(bearer|basic)(\s+)[^\s,;"']+/gi;

/** A URL's scheme and the rest of its token. */
const URL_TOKEN = /\b([a-z][a-z0-9+.-]*:\/\/)(\S+)/gi;

/** Schemes whose authority the WHATWG parser also ends at `\\`. */
const SPECIAL = /^(https?|wss?|ftp|file):\/\/$/i;

const PEM = /-----BEGIN [A-Z0-9 ]*-----/;

type Schema = z.ZodType | undefined;

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  catchall?: z.ZodType;
  valueType?: z.ZodType;
}

function defOf(s: Schema): Def | undefined {
  return (s as { _zod?: { def: Def } } | undefined)?._zod?.def;
}

function isSecret(s: Schema): boolean {
  for (let cur = s, i = 0; cur !== undefined && i < 16; i++) {
    const meta = (cur as { meta?: () => unknown }).meta?.() as { writeOnly?: unknown } | undefined;
    if (meta?.writeOnly === true) return true;
    cur = inner(cur);
  }
  return false;
}

/** The schema a wrapper (optional, default, pipe, …) wraps; undefined for a leaf. */
function inner(s: Schema): Schema {
  const d = defOf(s);
  if (d === undefined) return undefined;
  if (d.innerType !== undefined) return d.innerType;
  if (d.type === 'pipe') return defOf(d.out)?.type === 'transform' ? d.in : d.out;
  return undefined;
}

/** The union member that fits `value`'s kind (object, array, primitive). */
function member(options: readonly z.ZodType[], value: unknown): Schema {
  const kind = Array.isArray(value) ? 'array' : typeof value === 'object' && value !== null ? 'object' : 'leaf';
  for (const o of options) {
    let cur: Schema = o;
    while (inner(cur) !== undefined) cur = inner(cur);
    const t = defOf(cur)?.type;
    if ((kind === 'array' && t === 'array') || (kind === 'object' && (t === 'object' || t === 'record'))) return o;
    if (kind === 'leaf' && t !== 'array' && t !== 'object' && t !== 'record') return o;
  }
  return undefined;
}

/** `s` unless it says nothing about its values (`unknown`, `any`). */
function known(s: Schema): Schema {
  const t = defOf(s)?.type;
  return t === undefined || t === 'unknown' || t === 'any' ? undefined : s;
}

/** Whether the schema lifts the name rule: it fixes the values (enum, literal, boolean) or is marked. */
function lifts(s: Schema): boolean {
  for (let cur = s, i = 0; cur !== undefined && i < 16; i++) {
    if (isMarkedNotSecret(cur)) return true;
    const t = defOf(cur)?.type;
    if (t === 'enum' || t === 'literal' || t === 'boolean') return true;
    cur = inner(cur);
  }
  return false;
}

/** One URL token (`scheme://rest`) with the password of its userinfo replaced (WHATWG rules). */
function redactUrl(scheme: string, rest: string): string {
  // The authority ends at the first `/`, `?`, `#` (and `\` for special schemes); the userinfo
  // ends at its last `@`, so a password holding `@` is replaced whole.
  const end = rest.search(SPECIAL.test(scheme) ? /[/?#\\]/ : /[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  if (at < 0) return scheme + rest;
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  let hasPassword = colon >= 0 && colon < userinfo.length - 1;
  try {
    // The parser decides what is a password; the split above only says where it is written.
    hasPassword = new URL(scheme + rest).password !== '' || hasPassword;
  } catch {
    // Not a URL the parser takes: the split alone decides (a userinfo with `:` is a password).
  }
  if (!hasPassword) return scheme + rest;
  const user = colon < 0 ? '' : userinfo.slice(0, colon);
  return `${scheme}${user}:${REDACTED}${rest.slice(at)}`;
}

/** A string with URL passwords, credential parameters, auth-scheme credentials and PEM replaced. */
export function redactString(value: string): string {
  if (PEM.test(value)) return REDACTED;
  return value
    .replace(URL_TOKEN, (_m, scheme: string, rest: string) => redactUrl(scheme, rest))
    .replace(/([?&;])([^=&#\s]+)=([^&#\s]*)/g, (m, sep: string, key: string) =>
      SECRET_NAME.test(key) ? `${sep}${key}=${REDACTED}` : m,
    )
    .replace(
      /(^|\s)([A-Za-z_][\w-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']*)/g,
      (m, lead: string, key: string, eq: string) => (SECRET_NAME.test(key) ? `${lead}${key}${eq}${REDACTED}` : m),
    )
    .replace(AUTH_SCHEME, (_m, scheme: string, space: string) => `${scheme}${space}${REDACTED}`);
}

function redactSecret(value: unknown): unknown {
  if (typeof value === 'string') return value === '' ? '' : REDACTED;
  if (value === undefined || value === null) return value;
  return REDACTED;
}

/**
 * `value` with its secrets redacted, walked beside `schema` (undefined: no schema knows it).
 * `named`: the value sits under a key whose name marks a secret (rule 2).
 */
export function redact(value: unknown, schema: Schema, named = false): unknown {
  if (schema !== undefined && isSecret(schema)) return redactSecret(value);
  const secretName = named && !lifts(schema);
  let s = schema;
  while (inner(s) !== undefined) s = inner(s);
  const d = defOf(s);
  if (d?.type === 'union' && d.options !== undefined) return redact(value, member(d.options, value), secretName);
  if (typeof value === 'string') return secretName ? redactSecret(value) : redactString(value);
  if (typeof value === 'number' || typeof value === 'bigint') return secretName ? REDACTED : value;
  if (Array.isArray(value)) {
    return value.map((v) => redact(v, d?.type === 'array' ? d.element : undefined, secretName));
  }
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const field =
      d?.type === 'object'
        ? (d.shape?.[k] ?? known(d.catchall))
        : d?.type === 'record'
          ? known(d.valueType)
          : undefined;
    // A record's keys are data (a cluster called `auth`), so they mark only a leaf or a list.
    const keyIsName = d?.type !== 'record' || typeof v !== 'object' || v === null || Array.isArray(v);
    out[k] = redact(v, field, secretName || (keyIsName && SECRET_NAME.test(k)));
  }
  return out;
}

/** A plugin's `{ name, ...options }` with the options redacted by the plugin's own schema. */
function plugin(name: string, options: unknown, schema: Schema): unknown {
  const redacted = redact(options ?? {}, schema);
  return typeof redacted === 'object' && redacted !== null && !Array.isArray(redacted)
    ? { name, ...redacted }
    : { name, options: redacted };
}

function optionsSchema(factory: unknown): Schema {
  return (factory as { options?: z.ZodType } | undefined)?.options;
}

/** The effective config of `loaded`, secrets redacted (see the file header). */
export function configView(loaded: LoadedConfig): unknown {
  const c = loaded.config;
  const core = redact(c, configSchema) as Record<string, unknown>;
  return {
    file: loaded.file,
    config: {
      ...core,
      panel: plugin(c.panel.name, loaded.panel.options, optionsSchema(loaded.panel.factory)),
      operator: plugin(c.operator.name, loaded.operator.options, optionsSchema(loaded.operator.factory)),
      addressBook: plugin(c.addressBook.name, loaded.addressBook.options, optionsSchema(loaded.addressBook.factory)),
    },
  };
}
