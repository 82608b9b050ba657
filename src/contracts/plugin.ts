/**
 * Plugin factories (STYLE §4): a plugin is registered once by name with a pure `create`; config
 * produces instances. `options` is a zod schema for the keys beside `name` in config; the
 * runtime validates them (errors carry the config path) before calling `create`.
 */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Random } from '../base/random.ts';
import type { BackendRegistry } from './backend-registry.ts';
import type { AddressBook, Operator, Startable } from './types.ts';

/** What a factory gets besides its options. */
export interface PluginContext {
  /** Directory of the config file: relative paths in options resolve against it. */
  readonly configDir: string;
  readonly registry: BackendRegistry;
  readonly logger: Logger;
  readonly random: Random;
  /** Books call this after every snapshot swap (the runtime prunes the registry, updates health checks). */
  readonly snapshotChanged?: (book: AddressBook) => void;
}

export interface Factory<T, O = unknown> {
  readonly name: string;
  /** Schema of the options beside `name`; omitted = no options allowed. */
  readonly options?: z.ZodType<O>;
  create(options: O, context: PluginContext): T;
}

export type OperatorInstance = Operator & Partial<Startable>;
// biome-ignore lint/suspicious/noExplicitAny: factories are stored heterogeneously by name
export type OperatorFactory = Factory<OperatorInstance, any>;
// biome-ignore lint/suspicious/noExplicitAny: factories are stored heterogeneously by name
export type AddressBookFactory = Factory<AddressBook, any>;
