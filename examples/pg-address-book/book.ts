/**
 * A custom AddressBook backed by PostgreSQL, written the way a user would (see README.md,
 * "Writing an AddressBook"). Load it from config by path:
 *
 *   addressBook: { name: ./pg-book.ts, connectionString: postgres://…, channel: switchboard }
 *
 * 1. `start()` connects, runs `LISTEN <channel>`, reads the whole table and builds a frozen
 *    host → Candidates map (the snapshot). A failure here fails the router's start.
 * 2. A NOTIFY (schema.sql's trigger fires one per statement) arms a short debounce; then the
 *    table is read again and the new map replaces the old one in one assignment.
 * 3. A read that fails, or rows that do not validate, are logged; the old map keeps serving.
 * 4. If the connection drops, it reconnects with backoff, LISTENs again and reloads (changes
 *    made while it was away are caught up by that reload).
 * 5. `findAddresses` is one Map lookup: synchronous, no I/O, nothing allocated.
 */
import pg from 'pg';
import { z } from 'zod';
import { parseHostPort } from '../../src/config/address.ts';
import { DEFAULT_POLICY } from '../../src/config/cluster.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import type {
  AddressBook,
  Backend,
  BackendEntry,
  BackendLister,
  Candidates,
  Request,
} from '../../src/contracts/types.ts';

const options = z.strictObject({
  connectionString: z.string().min(1),
  channel: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'expected a lower-case SQL identifier')
    .default('switchboard'),
  table: z
    .string()
    .regex(/^[a-z_][a-z0-9_.]*$/, 'expected a lower-case SQL identifier')
    .default('switchboard_backends'),
  debounceMs: z.number().int().min(0).default(20),
});
type Options = z.output<typeof options>;

interface Row {
  host: string;
  address: string;
  weight: number;
}

/** Rows → frozen host → Candidates map; throws on the first bad row, naming it. */
function buildSnapshot(rows: readonly Row[]): ReadonlyMap<string, Candidates> {
  const byHost = new Map<string, Backend[]>();
  for (const r of rows) {
    const hp = parseHostPort(r.address);
    if (hp === undefined) throw new Error(`row (${r.host}, ${r.address}): address: expected host:port`);
    const list = byHost.get(r.host) ?? [];
    list.push(Object.freeze({ id: r.address, host: hp.host, port: hp.port, weight: r.weight, name: r.address }));
    byHost.set(r.host, list);
  }
  const out = new Map<string, Candidates>();
  for (const [host, backends] of byHost) {
    const sub = Object.freeze({ name: 'default', weight: 1, backends: Object.freeze(backends) });
    out.set(
      host,
      Object.freeze({
        product: host,
        cluster: host,
        policy: DEFAULT_POLICY,
        subclusters: Object.freeze([sub]),
        rule: `pg ${host}`,
      }),
    );
  }
  return out;
}

class PgAddressBook implements AddressBook, BackendLister {
  readonly #o: Options;
  readonly #ctx: PluginContext;
  #client: pg.Client | undefined;
  #snapshot: ReadonlyMap<string, Candidates> = new Map();
  #timer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #backoff = 100;
  version = 0;

  constructor(o: Options, ctx: PluginContext) {
    this.#o = o;
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    await this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#retryTimer);
    const c = this.#client;
    this.#client = undefined;
    await c?.end().catch(() => undefined);
  }

  findAddresses(request: Request): Candidates | undefined {
    return this.#snapshot.get(request.host);
  }

  *listBackends(): Iterable<BackendEntry> {
    for (const c of this.#snapshot.values())
      for (const backend of c.subclusters[0]!.backends) yield { backend, policy: c.policy, cluster: c.cluster };
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#o.connectionString });
    client.on('error', (e) => this.#lost(client, e));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    await client.connect();
    try {
      client.on('notification', () => this.#schedule());
      await client.query(`LISTEN ${this.#o.channel}`);
      if (this.#closed) throw new Error('closed while connecting');
      this.#client = client;
      await this.#reload(client, true);
      this.#backoff = 100;
    } catch (e) {
      this.#client = undefined;
      await client.end().catch(() => undefined);
      throw e;
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const c = this.#client;
      if (c !== undefined) void this.#reload(c, false);
    }, this.#o.debounceMs);
  }

  async #reload(client: pg.Client, first: boolean): Promise<void> {
    try {
      const res = await client.query<Row>(`SELECT host, address, weight FROM ${this.#o.table} ORDER BY host, address`);
      this.#snapshot = buildSnapshot(res.rows);
      this.version++;
      this.#ctx.snapshotChanged?.(this);
    } catch (e) {
      if (first) throw e;
      this.#ctx.logger.warn(
        { error: (e as Error).message },
        'pg-address-book: reload failed, keeping the previous routes',
      );
    }
  }

  #lost(client: pg.Client, e: Error): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    this.#ctx.logger.warn({ error: e.message }, 'pg-address-book: connection lost, reconnecting');
    this.#retry();
  }

  #retry(): void {
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#closed) return;
      this.#connect().catch(() => {
        this.#backoff = Math.min(this.#backoff * 2, 5000);
        if (!this.#closed) this.#retry();
      });
    }, this.#backoff);
  }
}

/** The factory Switchboard loads: `export default { name, options, create }` (src/contracts/plugin.ts). */
export default {
  name: 'pg-address-book',
  options,
  create: (o: Options, ctx: PluginContext): PgAddressBook => new PgAddressBook(o, ctx),
};
