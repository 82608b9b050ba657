/**
 * What the panel conformance suite runs against, apart from the table itself (panel.ts): the
 * five panels under test, the shape of a scenario, and the properties a scenario asks of a panel
 * when the panels differ by design (which engine it runs, how it routes). The scenario files
 * import these from here, not from panel.ts, which imports them: no import cycle.
 */

/** A panel under test: its label, its `panel:` config value and the routing mode it runs. */
export interface PanelUnderTest {
  readonly label: string;
  readonly panel: string | Readonly<Record<string, unknown>>;
  /** The top-level `routing:` of every config it runs; absent: the default, `per-request`. */
  readonly routing?: 'per-connection';
}

/** The five panels every scenario runs against. */
export const PANELS: readonly PanelUnderTest[] = [
  { label: 'net', panel: 'net' },
  { label: 'net (per-connection)', panel: 'net', routing: 'per-connection' },
  { label: 'http2', panel: 'http2' },
  { label: 'worker (net)', panel: { name: 'worker', threads: 2, engine: 'net' } },
  { label: 'worker (http2)', panel: { name: 'worker', threads: 2, engine: 'http2' } },
];

/** One scenario of the table. */
export interface Scenario {
  readonly name: string;
  /** The promise checked (DESIGN or README section). */
  readonly spec: string;
  /**
   * For a panel that cannot honour the scenario: the config it must refuse and the error it must
   * give (config path, option and panel named). Otherwise undefined and `run` is the scenario.
   */
  readonly refusal?: (p: PanelUnderTest) => { config: Record<string, unknown>; error: RegExp } | undefined;
  /**
   * For a panel the scenario's promise does not apply to and that has no config key to refuse
   * (an address-book option, say): why, with the README section that says so. The scenario is
   * then reported skipped on that panel, the reason in its name. Otherwise undefined.
   */
  readonly notFor?: (p: PanelUnderTest) => string | undefined;
  /** The scenario's own bound, for one that starts the real CLI in a child process (default 15 s). */
  readonly timeoutMs?: number;
  run(p: PanelUnderTest): Promise<void>;
}

/** The `panel:` and `routing:` keys of every config run on `p` (a scenario's own keys go after). */
export function panelKeys(p: PanelUnderTest): Record<string, unknown> {
  return p.routing === undefined ? { panel: p.panel } : { panel: p.panel, routing: p.routing };
}

/** Whether the panel (or the worker's engine) is the http2 panel. */
export function runsHttp2(p: PanelUnderTest): boolean {
  return p.panel === 'http2' || (typeof p.panel === 'object' && p.panel.engine === 'http2');
}

/** Whether `p` routes once per connection (the net panel with `routing: per-connection`). */
export function routesPerConnection(p: PanelUnderTest): boolean {
  return p.routing === 'per-connection';
}

/** How config errors name the http2 panel (panels/http2/validate.ts). */
export function http2Name(p: PanelUnderTest): string {
  return p.panel === 'http2' ? 'panel http2' : 'panel worker with engine http2';
}
