/**
 * Parsing the `file` book's list (Switchboard classic): YAML, JSON or CSV, chosen by extension.
 *
 *   - { host: subscriber1.mysite.test, backends: [127.0.0.1:3000, 127.0.0.1:3001] }
 *   - { host: "*.mysite.test", path: /api, backends: [127.0.0.1:3002], retries: 1 }
 *
 * CSV has a header row `host,path,backends`; backends are separated by spaces.
 */
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SwitchboardError } from '../../src/base/errors.ts';
import { backendAddress } from '../../src/config/address.ts';
import { checkRetryBudget, policyShape } from '../../src/config/cluster.ts';
import { formatIssues } from '../../src/config/errors.ts';

const hostPattern = z
  .string()
  .transform((h) => h.toLowerCase().replace(/\.$/, ''))
  .refine((h) => h === '*' || /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(h) || /^\[[0-9a-f:.]+\]$/.test(h), {
    message: 'expected a host name, *.suffix or *',
  });

export const entrySchema = z
  .strictObject({
    host: hostPattern,
    path: z.string().startsWith('/', 'expected a path starting with /').optional(),
    backends: z
      .array(backendAddress.or(z.strictObject({ address: backendAddress, weight: z.number().int().min(0).default(1) })))
      .min(1),
    ...policyShape,
  })
  .superRefine(checkRetryBudget);

export type FileEntry = z.output<typeof entrySchema>;

/** Parses the file's text into validated entries; throws SWB_ERR_ADDRESS_BOOK listing every problem. */
export function parseEntries(text: string, file: string): FileEntry[] {
  let raw: unknown;
  try {
    const ext = extname(file).toLowerCase();
    raw = ext === '.csv' ? parseCsv(text) : ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new SwitchboardError(
      'SWB_ERR_ADDRESS_BOOK',
      `addressBook.path: ${file}: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  const list = z.array(entrySchema);
  const parsed = list.safeParse(raw ?? [], { reportInput: true });
  if (!parsed.success) {
    const errors = formatIssues(parsed.error.issues, '', list).map((l) => `addressBook.path: ${file}: ${l}`);
    throw Object.assign(new SwitchboardError('SWB_ERR_ADDRESS_BOOK', errors.join('\n')), { errors });
  }
  const seen = new Set<string>();
  parsed.data.forEach((e, i) => {
    const key = `${e.host} ${e.path ?? ''}`;
    if (seen.has(key)) {
      throw new SwitchboardError(
        'SWB_ERR_ADDRESS_BOOK',
        `addressBook.path: ${file}: [${i}]: duplicate host and path ${key}`,
      );
    }
    seen.add(key);
  });
  return parsed.data;
}

function parseCsv(text: string): unknown[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const header = lines
    .shift()
    ?.split(',')
    .map((s) => s.trim());
  if (header?.join(',') !== 'host,path,backends')
    throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', 'csv: expected the header row host,path,backends');
  return lines.map((line, i) => {
    const cols = line.split(',').map((s) => s.trim());
    if (cols.length !== 3)
      throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `csv: line ${i + 2}: expected 3 columns, got ${cols.length}`);
    const [host, path, backends] = cols as [string, string, string];
    return { host, ...(path === '' ? {} : { path }), backends: backends.split(/\s+/).filter(Boolean) };
  });
}
