/**
 * The JSON Schema (draft 2020-12) of the whole config, plugin options included: the core schema
 * (src/config/schema.ts) with `panel`, `operator` and `addressBook` replaced by one branch per
 * built-in plugin (`{ name: <const>, ...that plugin's own options }`), plus a plain name and a
 * module path (whose options only the module knows); each `policies:` rule likewise, one branch
 * per built-in policy (`use: <const>` with that policy's `options`) and one for a module path. Printed by `switchboard schema`; editors
 * use it through the YAML language server (docs/config-schema.md).
 */
import { z } from 'zod';
import { builtinAddressBooks } from '../address-books/index.ts';
import { builtinOperators } from '../operators/index.ts';
import { builtinPolicies } from '../policies/index.ts';
import { DURATION_PATTERN, durationNumber, durationText } from '../src/config/duration.ts';
import { configSchema } from '../src/config/schema.ts';
import type { Factory } from '../src/contracts/plugin.ts';
import { builtinPanels } from './panels.ts';

type JsonSchema = Record<string, unknown>;

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

/** How a module path looks (app/plugins/resolve.ts `isModulePath`). */
const MODULE_PATH = '^(\\.\\.?/|/)';

const ZOD_ONLY_FORMATS = new Set(['starts_with', 'ends_with', 'includes', 'lowercase', 'uppercase', 'regex']);

function toJson(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    // Durations: what the transform accepts, which the plain string/number branches do not say.
    override: (ctx) => {
      // zod names string checks as formats no JSON Schema validator knows; the pattern stays.
      if (typeof ctx.jsonSchema.format === 'string' && ZOD_ONLY_FORMATS.has(ctx.jsonSchema.format))
        delete ctx.jsonSchema.format;
      if (ctx.zodSchema === durationText) {
        ctx.jsonSchema.pattern = DURATION_PATTERN;
        ctx.jsonSchema.description = 'a duration: 500ms, 2s, 1.5m, 1h (or a number of milliseconds)';
      } else if (ctx.zodSchema === durationNumber) {
        ctx.jsonSchema.minimum = 0;
        ctx.jsonSchema.description = 'milliseconds';
      }
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** One plugin role: a built-in name, `{ name, ...options }` per built-in, or a module path. */
function pluginRole(role: string, factories: Readonly<Record<string, Factory<unknown>>>): JsonSchema {
  const names = Object.keys(factories);
  const branches: JsonSchema[] = Object.entries(factories).map(([name, f]) => {
    const options = f.options === undefined ? { type: 'object', properties: {} } : toJson(f.options);
    const properties = (options.properties ?? {}) as Record<string, unknown>;
    const required = ((options.required ?? []) as string[]).filter((k) => k !== 'name');
    return {
      ...options,
      type: 'object',
      title: `${role} ${name}`,
      properties: { name: { const: name }, ...properties },
      required: ['name', ...required],
      additionalProperties: false,
    };
  });
  return {
    description: `the ${role}: a built-in name (${names.join(', ')}) or a module path, or { name, ...options }`,
    anyOf: [
      { type: 'string', enum: names },
      { type: 'string', pattern: MODULE_PATH },
      ...branches,
      {
        type: 'object',
        title: `${role} module`,
        properties: { name: { type: 'string', pattern: MODULE_PATH } },
        required: ['name'],
      },
    ],
  };
}

/** A `policies:` rule: one branch per built-in policy with its own `options`, or a module path. */
function policyRules(list: JsonSchema): JsonSchema {
  const rule = list.items as JsonSchema;
  const properties = rule.properties as Record<string, unknown>;
  const branch = (title: string, use: JsonSchema, options: JsonSchema | undefined): JsonSchema => ({
    ...rule,
    title,
    properties: { ...properties, use, ...(options === undefined ? {} : { options }) },
  });
  const branches = Object.entries(builtinPolicies).map(([name, f]) =>
    branch(`policy ${name}`, { const: name }, f.options === undefined ? undefined : toJson(f.options)),
  );
  const names = Object.keys(builtinPolicies).join(', ');
  return {
    ...list,
    description: `rules at the callback points, in order (docs/policies.md); use: a built-in (${names}) or a module path`,
    items: { anyOf: [...branches, branch('policy module', { type: 'string', pattern: MODULE_PATH }, undefined)] },
  };
}

/** The config's JSON Schema (draft 2020-12). */
export async function configJsonSchema(): Promise<JsonSchema> {
  const root = toJson(configSchema);
  const books: Record<string, Factory<unknown>> = {};
  for (const [name, load] of Object.entries(builtinAddressBooks)) books[name] = await load();
  const properties = root.properties as Record<string, unknown>;
  properties.panel = { ...pluginRole('panel', builtinPanels), default: 'net' };
  properties.operator = { ...pluginRole('operator', builtinOperators), default: 'bfe' };
  properties.addressBook = { ...pluginRole('address book', books), default: 'bfe' };
  properties.policies = policyRules(properties.policies as JsonSchema);
  return {
    $schema: DRAFT,
    title: 'Switchboard config (switchboard.yaml)',
    ...root,
  };
}
