/**
 * The plugin registry: resolves a role by built-in name or by module path (`./my-book.ts`,
 * relative to the config file). A module exports its factory as `default`; unknown names are
 * rejected with the list of known ones.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtinAddressBooks } from '../address-books/index.ts';
import { builtinOperators } from '../operators/index.ts';
import type { AddressBookFactory, Factory, OperatorFactory } from '../src/plugin.ts';
import { didYouMean } from '../src/suggest.ts';

function isModulePath(name: string): boolean {
  return name.startsWith('./') || name.startsWith('../') || isAbsolute(name);
}

/** Built-in factories by name, each loaded on first use. */
type Builtins<F> = Readonly<Record<string, () => Promise<F>>>;

const operatorLoaders: Builtins<OperatorFactory> = Object.fromEntries(
  Object.entries(builtinOperators).map(([name, f]) => [name, async () => f]),
);

async function resolveRole<F extends Factory<unknown>>(
  role: string,
  name: string,
  dir: string,
  builtins: Builtins<F>,
): Promise<F> {
  if (!isModulePath(name)) {
    const f = Object.hasOwn(builtins, name) ? await builtins[name]?.() : undefined;
    if (f === undefined) {
      throw new Error(
        `unknown ${role} ${JSON.stringify(name)}${didYouMean(name, Object.keys(builtins))}; known: ${Object.keys(builtins).join(', ')} or a module path`,
      );
    }
    return f;
  }
  const file = resolve(dir, name);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`cannot load ${role} module ${file}: ${(e as Error).message}`);
  }
  const f = mod.default as F | undefined;
  if (f === undefined || typeof f !== 'object' || typeof f.create !== 'function') {
    throw new Error(`${role} module ${file} must export default { name, create(options, context), options? }`);
  }
  return f;
}

/** The operator factory for a built-in name or module path. */
export function resolveOperator(name: string, dir: string): Promise<OperatorFactory> {
  return resolveRole('operator', name, dir, operatorLoaders);
}

/** The address-book factory for a built-in name or module path. */
export function resolveAddressBook(name: string, dir: string): Promise<AddressBookFactory> {
  return resolveRole('address book', name, dir, builtinAddressBooks);
}
