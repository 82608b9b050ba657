/**
 * The `worker` panel's options (`panel: { name: worker, threads, engine }`) and the engine a
 * thread runs. Validated by config load like an operator's or address book's options.
 */
import { z } from 'zod';
import type { PanelRef } from '../../src/config/schema.ts';

export const workerOptions = z.strictObject({
  /** Worker threads; default one per available core. */
  threads: z.number().int().min(1).max(256).optional(),
  /** The panel each thread runs. */
  engine: z.enum(['net', 'http2']).default('net'),
});

export type WorkerOptions = z.output<typeof workerOptions>;

/** The engine of a loaded `panel:` value (config load replaced it with `{ name, ...parsed options }`). */
export function engineOf(panel: PanelRef): WorkerOptions['engine'] {
  return panel.engine === 'http2' ? 'http2' : 'net';
}
