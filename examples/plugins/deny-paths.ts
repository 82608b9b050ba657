/**
 * `deny-paths`: a policy that answers 403 itself to any request whose path starts with one of
 * `prefixes`, at the `request` point (the head read, before the address book is asked).
 */
import type { PolicyAnswer, PolicyFactory, PolicyInstance } from 'switchboard/plugin';
import { z } from 'switchboard/plugin';

const options = z.strictObject({ prefixes: z.array(z.string().startsWith('/')).min(1) });

export default {
  name: 'deny-paths',
  options,
  points: ['request'],
  create(o: z.output<typeof options>): PolicyInstance {
    const answer: PolicyAnswer = { status: 403, headers: [], body: new TextEncoder().encode('denied\n') };
    return {
      request: ({ request }) =>
        o.prefixes.some((p) => (request.path ?? '').startsWith(p)) ? { action: 'answer', answer } : undefined,
    };
  },
} satisfies PolicyFactory<z.output<typeof options>>;
