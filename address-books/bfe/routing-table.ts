/**
 * The routing table: the one plain-data shape every built-in address book produces (the config's
 * `defaultProduct`, `conditions`, `products` and `clusters`). It is what `/routes` shows, what
 * `db export` writes and what worker threads receive; `compile.ts` turns it into a matcher.
 *
 * The schema's output is also valid input (addresses stay strings, durations become
 * milliseconds), so a parsed table can be sent, stored and parsed again unchanged.
 */
import { z } from 'zod';
import { parseHostPort } from '../../src/config/address.ts';
import { checkRetryBudget, policyShape } from '../../src/config/cluster.ts';

/** One backend of a sub-cluster: `address` is `host:port` (IPv6 in brackets). */
export const backendSchema = z.strictObject({
  address: z.string().refine((v) => parseHostPort(v) !== undefined, {
    error: (issue) => `expected host:port, got ${JSON.stringify(issue.input)}`,
  }),
  weight: z.number().int().min(0).default(1),
  name: z.string().min(1).optional(),
});

/** A sub-cluster: its GSLB weight and its backends (`GSLB_BLACKHOLE` has none). */
export const subclusterSchema = z.strictObject({
  weight: z.number().int().min(0),
  backends: z.array(backendSchema).default([]),
});

/** A cluster: the shared policy keys (DESIGN defaults) plus its sub-clusters. */
export const clusterSchema = z
  .strictObject({ ...policyShape, subclusters: z.record(z.string().min(1), subclusterSchema) })
  .superRefine(checkRetryBudget);

/** A basic rule: host + path tree entry; a missing `hosts` or `paths` means `["*"]`. */
export const basicRuleSchema = z
  .strictObject({
    hosts: z.array(z.string()).min(1).optional(),
    paths: z.array(z.string()).min(1).optional(),
    cluster: z.string().min(1),
  })
  .refine((r) => r.hosts !== undefined || r.paths !== undefined, { error: 'a basic rule needs hosts or paths' });

/** An advanced rule: a condition and the cluster it sends to. */
export const advancedRuleSchema = z.strictObject({ cond: z.string(), cluster: z.string().min(1) });

/** A product: how requests reach it (hosts, host tags, VIPs) and its rules. */
export const productSchema = z.strictObject({
  hosts: z.array(z.string()).optional(),
  hostTags: z.record(z.string().min(1), z.array(z.string())).optional(),
  vips: z.array(z.string()).optional(),
  basicRules: z.array(basicRuleSchema).optional(),
  rules: z.array(advancedRuleSchema).optional(),
});

/** The keys of a routing table; shared by the inline config form and the `routes:` file. */
export const routingTableShape = {
  defaultProduct: z.string().min(1).optional(),
  conditions: z.record(z.string().min(1), z.string()).optional(),
  products: z.record(z.string().min(1), productSchema).default({}),
  clusters: z.record(z.string().min(1), clusterSchema).default({}),
};

/** The routing table schema (strict: unknown keys are errors). */
export const routingTableSchema = z.strictObject(routingTableShape);

/** A parsed routing table (defaults applied); plain data, JSON-serialisable. */
export type RoutingTable = z.output<typeof routingTableSchema>;
/** One product of a routing table. */
export type ProductConfig = z.output<typeof productSchema>;
/** One cluster of a routing table. */
export type ClusterConfig = z.output<typeof clusterSchema>;
/** One basic rule of a product. */
export type BasicRuleConfig = z.output<typeof basicRuleSchema>;
