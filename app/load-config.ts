/**
 * Loading a config: read the YAML file, validate it whole against the schema, resolve the panel
 * (built-in name), the operator and the address book (built-in name or module path), validate
 * their options, then let the panel refuse what it cannot honour (src/panel/capabilities.ts
 * `PanelValidator`), then resolve each policy's `use:` and compile the rules
 * (app/runtime/engine-policies.ts) and the access-log rules (src/access-log/). Nothing starts until all of it
 * passed; every error names its path. Each step runs whenever the sections it reads are valid
 * (config-sections.ts), so one pass lists every error (`check`, a refused start or reload).
 * A YAML syntax error is `file:line:col: invalid YAML: <problem>`.
 */
import { dirname, resolve } from 'node:path';
import { parseDocument, type YAMLError } from 'yaml';
import { accessRuleErrors } from '../src/access-log/index.ts';
import { CONFIG_FILE, FileReadError, readUserText } from '../src/base/safe-file.ts';
import { ConfigError, formatIssues } from '../src/config/errors.ts';
import { type Config, configSchema, type PluginRef } from '../src/config/schema.ts';
import type { AddressBookFactory, OperatorFactory } from '../src/contracts/plugin.ts';
import type { AnyPolicyFactory } from '../src/contracts/policy.ts';
import { isPanelValidator } from '../src/panel/capabilities.ts';
import type { AnyPanelFactory, LoadedConfig } from '../src/panel/contract.ts';
import { mapping, type Section, unmet, validSections } from './config-sections.ts';
import { resolvePanel } from './panels.ts';
import { resolveAddressBook, resolveOperator, resolvePolicies } from './plugins/resolve.ts';
import { ACCESS_RULES_PATH } from './runtime/access-log.ts';
import { policyErrors } from './runtime/engine-policies.ts';

/** Command-line overrides (DESIGN: CLI flags override the file). */
export interface ConfigOverrides {
  readonly panel?: string;
  readonly workers?: number;
  readonly listen?: readonly string[];
  /** `--log-level` / `--log-format`: replace `log.level` / `log.format`. */
  readonly logLevel?: string;
  readonly logFormat?: string;
}

export type { LoadedConfig } from '../src/panel/contract.ts';

/** Reads, parses and validates `file`; throws ConfigError listing every problem. */
export async function loadConfig(file: string, overrides: ConfigOverrides = {}): Promise<LoadedConfig> {
  const { path, text, raw } = await readConfigFile(file);
  return validateConfig(raw, path, text, overrides);
}

/** Reads and parses the YAML of `file` (absolute `path`); throws ConfigError naming the file. */
export async function readConfigFile(file: string): Promise<{ path: string; text: string; raw: unknown }> {
  const path = resolve(file);
  let text: string;
  try {
    // A regular file of at most 64 MiB (src/base/safe-file.ts): a FIFO or a device is refused.
    text = await readUserText(path, CONFIG_FILE);
  } catch (e) {
    const notFound = e instanceof FileReadError && e.reason === 'not_found';
    throw new ConfigError(path, [notFound ? `${path}: config file not found` : `${(e as Error).message}`]);
  }
  return { path, text, raw: parseYaml(path, text) };
}

function parseYaml(path: string, text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new ConfigError(
      path,
      doc.errors.map((e) => yamlLine(path, e)),
    );
  try {
    return doc.toJS() ?? {};
  } catch (e) {
    // toJS() throws plain errors for what parsing let through, e.g. an alias with no anchor
    // (`*x`); found by test/adversarial/config-fuzz.
    throw new ConfigError(path, [`${path}: invalid YAML: ${problem((e as Error).message)}`]);
  }
}

/** `file:line:col: invalid YAML: <problem>`, as compilers write it. */
function yamlLine(path: string, e: YAMLError): string {
  const at = e.linePos?.[0];
  return `${path}${at === undefined ? '' : `:${at.line}:${at.col}`}: invalid YAML: ${problem(e.message)}`;
}

/** The yaml library's first line without its ` at line L, column C:` tail (the position is written apart). */
function problem(message: string): string {
  const first = (message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?\s*$/, '').replace(/:\s*$/, '');
  return first.length > 0 ? first[0]!.toLowerCase() + first.slice(1) : first;
}

/** Validates an already-parsed config object (also used by tests and the demo). */
export async function validateConfig(
  raw: unknown,
  path: string,
  text: string,
  overrides: ConfigOverrides = {},
): Promise<LoadedConfig> {
  const parts = await inspectConfig(raw, path, overrides);
  if (parts.loaded === undefined) throw new ConfigError(path, parts.errors);
  return { ...parts.loaded, text };
}

/** The sections a panel's refusals read (panels/http2/validate.ts; the worker panel asks its engine's). */
const PANEL_READS: readonly Section[] = ['panel', 'listeners', 'routing', 'limits', 'log'];

/** What one validation pass found: every error, and each part that did validate. */
export interface ConfigParts {
  readonly errors: readonly string[];
  /** Present when the whole config is valid. */
  readonly loaded: Omit<LoadedConfig, 'text'> | undefined;
  /** Each plugin whose name resolved and whose options are valid, even when other keys are not. */
  readonly addressBook: LoadedConfig['addressBook'] | undefined;
  readonly dir: string;
  /** The config read section by section (config-sections.ts): read only the sections not in `bad`. */
  readonly config: Config;
  /** Sections with errors, a plugin that did not resolve or whose options are invalid among them. */
  readonly bad: ReadonlySet<Section>;
  /** The further checks that could not run, each with why (`policies not compiled: fleet has errors`). */
  readonly skipped: readonly string[];
}

/**
 * One pass over the whole config: the schema, each plugin (name and options), the panel's
 * refusals, the policies and the access-log rules, each run whenever the sections it reads are
 * valid (config-sections.ts), so `check` reports everything at once and a reload refuses with
 * every reason. Never throws on bad input.
 */
export async function inspectConfig(raw: unknown, path: string, overrides: ConfigOverrides = {}): Promise<ConfigParts> {
  const withOverrides = applyOverrides(raw, overrides);
  const parsed = configSchema.safeParse(withOverrides, { reportInput: true });
  const errors: string[] = parsed.success ? [] : formatIssues(parsed.error.issues, '', configSchema);
  const sections = parsed.success
    ? { config: parsed.data, bad: new Set<Section>(), errors: [] }
    : validSections(withOverrides, parsed.error.issues);
  errors.push(...sections.errors);
  const bad = new Set(sections.bad);
  const dir = dirname(path);
  const ref = (key: 'panel' | 'operator' | 'addressBook') => (bad.has(key) ? undefined : sections.config[key]);
  const panel = await resolvePlugin('panel', ref('panel'), dir, async (name) => resolvePanel(name), errors);
  const operator = await resolvePlugin('operator', ref('operator'), dir, resolveOperator, errors);
  const addressBook = await resolvePlugin('addressBook', ref('addressBook'), dir, resolveAddressBook, errors);
  if (panel === undefined) bad.add('panel');
  if (operator === undefined) bad.add('operator');
  if (addressBook === undefined) bad.add('addressBook');
  // The panel's options with their defaults, where the worker threads and the admin API read them.
  const config =
    panel === undefined
      ? sections.config
      : { ...sections.config, panel: { name: sections.config.panel.name, ...(panel.options as object) } };
  const skipped: string[] = [];
  /** Whether a check reading `needs` can run; if not, the line saying why is kept. */
  const can = (what: string, needs: readonly Section[]): boolean => {
    const why = unmet(what, needs, bad);
    if (why !== undefined) skipped.push(why);
    return why === undefined;
  };
  // A panel that did not resolve is not named as skipped: which panel, and so whether it refuses anything, is unknown.
  if (panel !== undefined && isPanelValidator(panel.factory) && can("the panel's refusals not checked", PANEL_READS))
    errors.push(...panel.factory.validate(config, panel.options));
  let policies: ReadonlyMap<string, AnyPolicyFactory> = new Map();
  if (bad.has('policies') ? hasEntries(withOverrides, 'policies') : config.policies.length > 0) {
    const before = errors.length;
    if (!bad.has('policies')) policies = await resolvePolicies(config.policies, dir, errors);
    if (errors.length > before) bad.add('policies');
    // Only a `scope: fleet` rule reads `fleet:` and the panel (engine-policies.ts checkingFleetCounters).
    const needs: Section[] = fleetScoped(withOverrides) ? ['policies', 'fleet', 'panel'] : ['policies'];
    if (can('policies not compiled', needs)) errors.push(...everyPolicyError(config, policies, dir));
  }
  if (!bad.has('log')) errors.push(...accessRuleErrors(config.log.accessRules, ACCESS_RULES_PATH));
  else if (hasEntries(mapping(mapping(withOverrides)?.log)?.access, 'rules'))
    can('access-log rules not compiled', ['log']);
  const found = [...new Set(errors)];
  const parts = { errors: found, loaded: undefined, addressBook, dir, config, bad, skipped };
  if (found.length > 0 || panel === undefined || operator === undefined || addressBook === undefined) return parts;
  return { ...parts, loaded: { file: path, dir, config, panel, operator, addressBook, policies } };
}

/**
 * Every bad rule of the list, not only the first (compiling stops there): when the list fails,
 * each rule is compiled alone and its lines renumbered to its place; a failure no rule has alone
 * is the list's own line.
 */
function everyPolicyError(config: Config, factories: ReadonlyMap<string, AnyPolicyFactory>, dir: string): string[] {
  const whole = policyErrors(config, factories, dir);
  if (whole.length === 0 || config.policies.length < 2) return whole;
  const each = config.policies.flatMap((rule, i) =>
    policyErrors({ ...config, policies: [rule] }, factories, dir).map((l) =>
      l.replaceAll('policies[0]', `policies[${i}]`),
    ),
  );
  return each.length > 0 ? each : whole;
}

/** Whether a rule of `raw`'s `policies:` counts across the fleet (`options.scope: fleet`). */
function fleetScoped(raw: unknown): boolean {
  const rules = mapping(raw)?.policies;
  return Array.isArray(rules) && rules.some((r: unknown) => mapping(mapping(r)?.options)?.scope === 'fleet');
}

/** Whether `raw` is a mapping whose `key` is a non-empty list. */
function hasEntries(raw: unknown, key: string): boolean {
  const value = mapping(raw)?.[key];
  return Array.isArray(value) && value.length > 0;
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
  ref: PluginRef | undefined,
  dir: string,
  resolver: (name: string, dir: string) => Promise<F>,
  errors: string[],
): Promise<{ factory: F; options: unknown } | undefined> {
  if (ref === undefined) return undefined;
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
  const parsed = factory.options.safeParse(rest, { reportInput: true });
  if (!parsed.success) {
    errors.push(...formatIssues(parsed.error.issues, key, factory.options));
    return undefined;
  }
  return { factory, options: parsed.data };
}
