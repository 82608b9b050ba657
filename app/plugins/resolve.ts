/**
 * The plugin registry: resolves a role (operator, address book, policy) by built-in name or by module path (`./my-book.ts`,
 * relative to the config file). A module exports its factory as `default`; unknown names are
 * rejected with the list of known ones. A module path is imported natively first (Node strips
 * erasable TypeScript); a module that needs more than stripping (enums, parameter properties,
 * namespaces: ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX) is loaded through tsx's `tsImport` instead.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtinAddressBooks } from '../../address-books/index.ts';
import { builtinOperators } from '../../operators/index.ts';
import { builtinPolicies } from '../../policies/index.ts';
import { SwitchboardError } from '../../src/base/errors.ts';
import { didYouMean } from '../../src/base/suggest.ts';
import type { AddressBookFactory, OperatorFactory } from '../../src/contracts/plugin.ts';
import type { AnyPolicyFactory } from '../../src/contracts/policy.ts';

function isModulePath(name: string): boolean {
  return name.startsWith('./') || name.startsWith('../') || isAbsolute(name);
}

/** Built-in factories by name, each loaded on first use. */
type Builtins<F> = Readonly<Record<string, () => Promise<F>>>;

const operatorLoaders: Builtins<OperatorFactory> = Object.fromEntries(
  Object.entries(builtinOperators).map(([name, f]) => [name, async () => f]),
);

/** What every plugin factory has: a name and a `create`. */
interface NamedFactory {
  readonly name: string;
  readonly create: (...args: never[]) => unknown;
}

const policyLoaders: Builtins<AnyPolicyFactory> = Object.fromEntries(
  Object.entries(builtinPolicies).map(([name, f]) => [name, async () => f]),
);

async function resolveRole<F extends NamedFactory>(
  role: string,
  name: string,
  dir: string,
  builtins: Builtins<F>,
): Promise<F> {
  if (!isModulePath(name)) {
    const f = Object.hasOwn(builtins, name) ? await builtins[name]?.() : undefined;
    if (f === undefined) {
      throw new SwitchboardError(
        'SWB_ERR_PLUGIN',
        `unknown ${role} ${JSON.stringify(name)}${didYouMean(name, Object.keys(builtins))}; known: ${Object.keys(builtins).join(', ')} or a module path`,
      );
    }
    return f;
  }
  const file = resolve(dir, name);
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(file);
  } catch (e) {
    throw new SwitchboardError('SWB_ERR_PLUGIN', `cannot load ${role} module ${file}: ${firstLine(e)}`);
  }
  const f = defaultExport(mod) as F | undefined;
  if (f === undefined || typeof f !== 'object' || typeof f.create !== 'function') {
    throw new SwitchboardError(
      'SWB_ERR_PLUGIN',
      `${role} module ${file} must export default { name, create(options, context), options? }`,
    );
  }
  return f;
}

function firstLine(e: unknown): string {
  return String((e as Error).message ?? e).split('\n')[0] ?? '';
}

/** Errors of Node's type stripping that a full TypeScript transform (tsx) can get past. */
const NEEDS_TRANSFORM = new Set(['ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX', 'ERR_INVALID_TYPESCRIPT_SYNTAX']);

/** Imports `file` natively, or through tsx when Node's type stripping cannot run it. */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (e) {
    if (!NEEDS_TRANSFORM.has((e as { code?: string }).code ?? '')) throw e;
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
}

/** The default export; tsx loads a file outside a `"type": "module"` package as CommonJS. */
function defaultExport(mod: Record<string, unknown>): unknown {
  const d = mod.default as { create?: unknown; default?: unknown } | undefined;
  if (d !== undefined && d !== null && typeof d.create !== 'function' && d.default !== undefined) return d.default;
  return d;
}

/** The operator factory for a built-in name or module path. */
export function resolveOperator(name: string, dir: string): Promise<OperatorFactory> {
  return resolveRole('operator', name, dir, operatorLoaders);
}

/** The address-book factory for a built-in name or module path. */
export function resolveAddressBook(name: string, dir: string): Promise<AddressBookFactory> {
  return resolveRole('address book', name, dir, builtinAddressBooks);
}

/** The policy factory for a built-in name (`block`) or a module path (`./my-policy.ts`). */
export function resolvePolicy(name: string, dir: string): Promise<AnyPolicyFactory> {
  return resolveRole('policy', name, dir, policyLoaders);
}

/**
 * The factories of every `use:` of a `policies:` list, by `use:` value; a `use:` that does not
 * resolve is one error line naming its rule (`policies[1] (x).use: unknown policy …`).
 */
export async function resolvePolicies(
  rules: readonly { readonly name: string; readonly use: string }[],
  dir: string,
  errors: string[],
): Promise<ReadonlyMap<string, AnyPolicyFactory>> {
  const out = new Map<string, AnyPolicyFactory>();
  for (const [i, rule] of rules.entries()) {
    if (out.has(rule.use)) continue;
    try {
      out.set(rule.use, await resolvePolicy(rule.use, dir));
    } catch (e) {
      errors.push(`policies[${i}] (${rule.name}).use: ${(e as Error).message}`);
    }
  }
  return out;
}
