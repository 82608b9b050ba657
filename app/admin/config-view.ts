/**
 * `GET /config`: the effective config (defaults applied, each plugin's options parsed by its own
 * schema) with secrets redacted. Three rules, applied together:
 *
 * 1. **Schema.** A field whose zod schema carries `.meta({ secret: true })` is a secret
 *    (`admin.token`; a plugin marks its own the same way). The value is walked beside the core
 *    schema and beside each plugin's options schema, so a secret is found by where it is, not
 *    by what it is called.
 * 2. **Values.** Anywhere, whatever the key: the password of a URL (`postgres://u:pw@h/db`,
 *    `http://root:pw@etcd:2379`) and credential parameters of its query string
 *    (`?password=`, `sslpassword`, `token`, …) or of a libpq keyword/value string
 *    (`host=db password=pw`) are replaced, and a string holding PEM material
 *    (`-----BEGIN … PRIVATE KEY-----`) is replaced whole. Hosts, ports and file paths stay.
 * 3. **Names**, only where no schema says what a field is (a loose plugin object, a custom
 *    plugin without options schema): keys like `password`, `passphrase`, `secret`, `token`,
 *    `apiKey`, `privateKey`, `credentials`, `auth`.
 *
 * A redacted string becomes `"<redacted>"`; an empty one stays empty (it shows that none is set).
 */
import type { z } from 'zod';
import type { LoadedConfig } from '../../src/config/loaded.ts';
import { configSchema } from '../../src/config/schema.ts';

export const REDACTED = '<redacted>';

/** Field names that hold a secret when no schema says otherwise. */
const SECRET_NAME =
  /^(password|passwd|pass|passphrase|secret|token|api[-_]?key|private[-_]?key|credentials?|auth|authorization|client[-_]?secret|access[-_]?key|secret[-_]?key)$/i;

/** Query parameters that carry credentials in a DSN or URL. */
const SECRET_PARAM = /^(password|passwd|pass|sslpassword|sslkey|token|secret|api[-_]?key|access[-_]?token|auth)$/i;

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
    const meta = (cur as { meta?: () => unknown }).meta?.() as { secret?: unknown } | undefined;
    if (meta?.secret === true) return true;
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

/** `s` unless it says nothing about its values (`unknown`, `any`): then name rules apply. */
function known(s: Schema): Schema {
  const t = defOf(s)?.type;
  return t === undefined || t === 'unknown' || t === 'any' ? undefined : s;
}

/** A string with URL passwords, credential query parameters and PEM material replaced. */
export function redactString(value: string): string {
  if (PEM.test(value)) return REDACTED;
  return value
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^/\s?#@]*)@/gi, (_m, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return colon < 0 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:${REDACTED}@`;
    })
    .replace(/([?&])([^=&#\s]+)=([^&#\s]*)/g, (m, sep: string, key: string) =>
      SECRET_PARAM.test(key) ? `${sep}${key}=${REDACTED}` : m,
    )
    .replace(
      /(^|\s)([A-Za-z_][\w-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']*)/g,
      (m, lead: string, key: string, eq: string) => (SECRET_PARAM.test(key) ? `${lead}${key}${eq}${REDACTED}` : m),
    );
}

function redactSecret(value: unknown): unknown {
  if (typeof value === 'string') return value === '' ? '' : REDACTED;
  if (value === undefined || value === null) return value;
  return REDACTED;
}

/** `value` with its secrets redacted, walked beside `schema` (undefined: no schema knows it). */
export function redact(value: unknown, schema: Schema): unknown {
  if (schema !== undefined && isSecret(schema)) return redactSecret(value);
  let s = schema;
  while (inner(s) !== undefined) s = inner(s);
  const d = defOf(s);
  if (d?.type === 'union' && d.options !== undefined) return redact(value, member(d.options, value));
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, d?.type === 'array' ? d.element : undefined));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const field =
      d?.type === 'object'
        ? (d.shape?.[k] ?? known(d.catchall))
        : d?.type === 'record'
          ? known(d.valueType)
          : undefined;
    if (field === undefined && SECRET_NAME.test(k)) out[k] = redactSecret(v);
    else out[k] = redact(v, field);
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
