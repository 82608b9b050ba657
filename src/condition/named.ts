/**
 * Validation of a whole `conditions:` block (named conditions, reference bfe.md §1.3): every name
 * must be usable as `$name`, and every source must compile, with unknown names and cycles caught.
 */
import { SwitchboardError } from '../base/errors.ts';
import { compileWith, stateOf } from './compile.ts';

const NAME = /^[\p{L}_-][\p{L}\p{Nd}_-]*$/u;

/** Validates a whole set of named conditions at once (unknown names, cycles), throwing on the first problem. */
export function checkNamedConditions(named: Readonly<Record<string, string>>, where: string): void {
  for (const name of Object.keys(named)) {
    const path = `${where}.${name}`;
    if (!NAME.test(name)) {
      throw new SwitchboardError(
        'SWB_ERR_CONDITION',
        `${path}: bad condition name '${name}': expected letters, digits, '_' or '-', not starting with a digit`,
      );
    }
    compileWith(named[name] as string, path, stateOf({ named, where: path }, [name]));
  }
}
