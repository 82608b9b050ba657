/**
 * Loading a config: read the YAML file, validate it whole against the schema, resolve the panel
 * (built-in name), the operator and the address book (built-in name or module path), validate
 * their options, then let the panel refuse what it cannot honour (src/panel.ts
 * `PanelValidator`). Nothing starts until all of it passed; every error names its path.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, formatIssues } from '../src/config/errors.ts';
import type { LoadedConfig } from '../src/config/loaded.ts';
import { configSchema } from '../src/config/schema.ts';
import { type AnyPanelFactory, isPanelValidator } from '../src/panel.ts';
import type { AddressBookFactory, OperatorFactory } from '../src/plugin.ts';
import { resolvePanel } from './panels.ts';
import { resolveAddressBook, resolveOperator } from './plugins.ts';

/** Command-line overrides (DESIGN: CLI flags override the file). */
export interface ConfigOverrides {
  readonly panel?: string;
  readonly workers?: number;
  readonly listen?: readonly string[];
  /** `--log-level` / `--log-format`: replace `log.level` / `log.format`. */
  readonly logLevel?: string;
  readonly logFormat?: string;
}

export type { LoadedConfig } from '../src/config/loaded.ts';

/** Reads, parses and validates `file`; throws ConfigError listing every problem. */
export async function loadConfig(file: string, overrides: ConfigOverrides = {}): Promise<LoadedConfig> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ConfigError(path, [`cannot read: ${(e as Error).message}`]);
  }
  const raw = parseYaml(path, text);
  return validateConfig(raw, path, text, overrides);
}

function parseYaml(path: string, text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      path,
      doc.errors.map((e) => `yaml line ${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]}`),
    );
  }
  try {
    return doc.toJS() ?? {};
  } catch (e) {
    // toJS() throws plain errors for what parsing let through, e.g. an alias with no anchor
    // (`*x`); found by test/adversarial/config-fuzz.
    throw new ConfigError(path, [`yaml: ${(e as Error).message.split('\n')[0]}`]);
  }
}

/** Validates an already-parsed config object (also used by tests and the demo). */
export async function validateConfig(
  raw: unknown,
  path: string,
  text: string,
  overrides: ConfigOverrides = {},
): Promise<LoadedConfig> {
  const withOverrides = applyOverrides(raw, overrides);
  const parsed = configSchema.safeParse(withOverrides);
  if (!parsed.success) throw new ConfigError(path, formatIssues(parsed.error.issues));
  const dir = dirname(path);
  const errors: string[] = [];
  const panel = await resolvePlugin('panel', parsed.data.panel, dir, async (name) => resolvePanel(name), errors);
  const operator = await resolvePlugin('operator', parsed.data.operator, dir, resolveOperator, errors);
  const addressBook = await resolvePlugin('addressBook', parsed.data.addressBook, dir, resolveAddressBook, errors);
  if (errors.length > 0 || panel === undefined || operator === undefined || addressBook === undefined)
    throw new ConfigError(path, errors);
  // The panel's options with their defaults, where the worker threads and the admin API read them.
  const config = { ...parsed.data, panel: { name: parsed.data.panel.name, ...(panel.options as object) } };
  if (isPanelValidator(panel.factory)) errors.push(...panel.factory.validate(config, panel.options));
  if (errors.length > 0) throw new ConfigError(path, errors);
  return { file: path, dir, config, panel, operator, addressBook, text };
}

function applyOverrides(raw: unknown, o: ConfigOverrides): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const out: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  if (o.panel !== undefined || o.workers !== undefined) {
    const current = out.panel;
    const base: Record<string, unknown> =
      typeof current === 'object' && current !== null ? { ...(current as object) } : { name: current ?? 'net' };
    // Another panel than the file's: the file's panel options are not this panel's.
    const panel = o.panel === undefined || o.panel === base.name ? base : { name: o.panel };
    out.panel = { ...panel, ...(o.workers !== undefined ? { threads: o.workers } : {}) };
  }
  if (o.listen !== undefined && o.listen.length > 0) {
    out.listeners = o.listen.map((address, i) => ({ name: i === 0 ? 'cli' : `cli${i}`, address }));
  }
  if (o.logLevel !== undefined || o.logFormat !== undefined) {
    const log = typeof out.log === 'object' && out.log !== null ? { ...(out.log as object) } : {};
    out.log = {
      ...log,
      ...(o.logLevel !== undefined ? { level: o.logLevel } : {}),
      ...(o.logFormat !== undefined ? { format: o.logFormat } : {}),
    };
  }
  return out;
}

async function resolvePlugin<F extends AnyPanelFactory | OperatorFactory | AddressBookFactory>(
  key: 'panel' | 'operator' | 'addressBook',
  ref: { name: string; [k: string]: unknown },
  dir: string,
  resolver: (name: string, dir: string) => Promise<F>,
  errors: string[],
): Promise<{ factory: F; options: unknown } | undefined> {
  let factory: F;
  try {
    factory = await resolver(ref.name, dir);
  } catch (e) {
    errors.push(`${key}.name: ${(e as Error).message}`);
    return undefined;
  }
  const { name: _name, ...rest } = ref;
  if (factory.options === undefined) {
    const keys = Object.keys(rest);
    if (keys.length > 0) {
      errors.push(...keys.map((k) => `${key}.${k}: unknown key (${ref.name} takes no options)`));
      return undefined;
    }
    return { factory, options: {} };
  }
  const parsed = factory.options.safeParse(rest);
  if (!parsed.success) {
    errors.push(...formatIssues(parsed.error.issues, key));
    return undefined;
  }
  return { factory, options: parsed.data };
}
