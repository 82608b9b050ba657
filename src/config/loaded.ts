/**
 * What a validated config becomes before anything starts: the parsed config plus the resolved
 * panel, operator and address-book factories with their checked options. The loader that produces it
 * lives in the composition layer (app/load-config.ts); the core only knows the shape.
 */
import type { ResolvedPanel } from '../panel.ts';
import type { AddressBookFactory, OperatorFactory } from '../plugin.ts';
import type { Config } from './schema.ts';

/** A validated config with its plugins resolved and their options parsed. */
export interface LoadedConfig {
  readonly file: string;
  readonly dir: string;
  readonly config: Config;
  /** The panel factory named by `config.panel` and its checked options. */
  readonly panel: ResolvedPanel;
  readonly operator: { readonly factory: OperatorFactory; readonly options: unknown };
  readonly addressBook: { readonly factory: AddressBookFactory; readonly options: unknown };
  /** The raw text, for change detection (an identical config is a no-op on reload). */
  readonly text: string;
}
