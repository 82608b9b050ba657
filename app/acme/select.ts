/**
 * Which names an `acme:` section keeps certificates for, and in what order they may be ordered
 * (issue 39): a book writer must not be able to spend the operator's CA budget.
 *
 *   1. `names:` given ─► those names, priority `configured` (the routing table is not read).
 *   2. else the routing table's exact hosts (names.ts) ─► dropped unless equal to or under one
 *      of `domains:` (when set) ─► names already held (a certificate served or in storage),
 *      priority `held`, then the others, priority `new`, in the book's sorted order.
 *   3. past `maxNames` the rest are skipped: new names first, never a held one before a new one.
 *
 * Every name left out comes back with its reason, for one log line naming them.
 */

/** Lower sorts first: configured names and held names (renewals) before new names from the book. */
export const PRIORITY = { configured: 0, held: 1, new: 2 } as const;
export type Priority = (typeof PRIORITY)[keyof typeof PRIORITY];

/** A name left out of a section, and why. */
export interface SkippedName {
  readonly name: string;
  readonly reason: 'domains' | 'maxNames';
}

/** What `chooseNames` needs: the section's limits and what it holds already. */
export interface NameSource {
  readonly configured: readonly string[] | undefined;
  readonly book: readonly string[];
  readonly held: ReadonlySet<string>;
  readonly domains: readonly string[] | undefined;
  readonly maxNames: number;
}

/** True when `name` is `domain` or a subdomain of it (label boundary: `xexample.com` is not under `example.com`). */
export function underDomain(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}

/** The names to keep, in priority order, and the ones skipped. */
export function chooseNames(src: NameSource): {
  names: { name: string; priority: Priority }[];
  skipped: SkippedName[];
} {
  const skipped: SkippedName[] = [];
  let ranked: { name: string; priority: Priority }[];
  if (src.configured !== undefined) {
    ranked = [...new Set(src.configured)].map((name) => ({ name, priority: PRIORITY.configured }));
  } else {
    const { domains } = src;
    const allowed: string[] = [];
    for (const name of src.book) {
      if (domains === undefined || domains.some((d) => underDomain(name, d))) allowed.push(name);
      else skipped.push({ name, reason: 'domains' });
    }
    ranked = [
      ...allowed.filter((n) => src.held.has(n)).map((name) => ({ name, priority: PRIORITY.held })),
      ...allowed.filter((n) => !src.held.has(n)).map((name) => ({ name, priority: PRIORITY.new })),
    ];
  }
  for (const { name } of ranked.slice(src.maxNames)) skipped.push({ name, reason: 'maxNames' });
  return { names: ranked.slice(0, src.maxNames), skipped };
}

/** The log line for the names a section skips: fields (at most 50 names per reason) and message. */
export function skippedLine(
  listener: string,
  spec: { readonly domains?: readonly string[] | undefined; readonly maxNames: number },
  skipped: readonly SkippedName[],
): [Record<string, unknown>, string] {
  const list = (reason: SkippedName['reason']) => skipped.filter((s) => s.reason === reason).map((s) => s.name);
  const [outside, over] = [list('domains'), list('maxNames')];
  return [
    {
      listener,
      ...(outside.length === 0 ? {} : { notUnderDomains: outside.slice(0, 50), domains: spec.domains }),
      ...(over.length === 0 ? {} : { overMaxNames: over.slice(0, 50), maxNames: spec.maxNames }),
      skipped: skipped.length,
    },
    `acme: ${skipped.length} name(s) of the routing table get no certificate:` +
      (outside.length === 0 ? '' : ` ${outside.length} not under acme.domains`) +
      (over.length === 0 ? '' : ` ${over.length} past acme.maxNames (${spec.maxNames})`),
  ];
}
