/**
 * `block` (BFE mod_block, HAProxy `tcp-request connection reject` / `http-request deny`):
 * refuse a connection or request whose client address is in a list, or every one the rule's
 * `when:` selects when no list is given.
 *
 *   - { name: deny-list, use: block, options: { file: conf/deny.txt } }           # close at accept
 *   - { name: admin, use: block, when: 'req_path_prefix_in("/admin", false)', action: { respond: 403 } }
 *
 * 1. `cidrs:` (inline) and `file:` (one entry per line, `#` comments) are `CidrSet`s
 *    (lib/cidr-set.ts): the lookup is a binary search whatever the list's length. The file is
 *    read at `start()`, parsed in slices (lib/cidr-list.ts); a bad line is an error naming
 *    `file:line`. The file is watched (lib/watched-list.ts): an edit takes effect within about
 *    a second; a bad edit keeps the list it had and is logged.
 * 2. At any point the client address is tested (at `connection` the PROXY source or the socket
 *    peer; from `request` on, the request's client address).
 * 3. Refused: `close` at `connection`/`handshake`; 403 at the request points; or the rule's
 *    `action:`.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { PointContext, PolicyFactory, PolicyInstance, PolicyVerdict } from '../src/contracts/policy.ts';
import { makeAnswer } from '../src/policy/answer.ts';
import { cidrSetOf } from './lib/cidr-list.ts';
import { refusalOf } from './lib/refusal.ts';
import { WatchedCidrFile } from './lib/watched-list.ts';

const options = z
  .strictObject({
    /** Addresses and CIDR blocks, inline. */
    cidrs: z.array(z.string()).optional(),
    /** A list file, relative to the config file. */
    file: z.string().min(1).optional(),
  })
  .default({});

type BlockOptions = z.output<typeof options>;

const FORBIDDEN = makeAnswer({ status: 403, body: 'forbidden\n' });

/** The `block` policy factory. */
export const block = {
  name: 'block',
  options,
  points: ['connection', 'handshake', 'request', 'routed'],
  refuses: true,
  create(o: BlockOptions, ctx): PolicyInstance {
    const refusal = refusalOf(ctx.action, ctx.point, FORBIDDEN);
    const inline = o.cidrs === undefined ? undefined : cidrSetOf(o.cidrs, `${ctx.where}.cidrs`);
    const file =
      o.file === undefined
        ? undefined
        : new WatchedCidrFile(resolve(ctx.configDir, o.file), (e) =>
            ctx.logger?.warn(
              { err: e },
              `policy ${ctx.rule}: ${e instanceof Error ? e.message : String(e)}; keeping the list it had`,
            ),
          );
    const listed = (ip: string): boolean => inline?.has(ip) === true || file?.set?.has(ip) === true;
    const everyone = inline === undefined && file === undefined;
    const decide = (c: PointContext): PolicyVerdict | undefined =>
      everyone || listed(c.request?.clientIp ?? c.connection.clientIp) ? refusal : undefined;
    return {
      connection: decide,
      handshake: decide,
      request: decide,
      routed: decide,
      async start() {
        await file?.start();
      },
      async close() {
        file?.close();
      },
    };
  },
} satisfies PolicyFactory<BlockOptions>;
