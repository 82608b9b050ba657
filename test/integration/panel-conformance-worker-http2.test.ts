/**
 * The panel conformance suite (test/conformance/panel.ts) against the `worker (http2)` panel. One file per
 * panel so the five run in parallel.
 */
import { afterAll } from 'vitest';
import { closePki, PANELS, panelConformance } from '../conformance/panel.ts';

afterAll(closePki);
panelConformance(PANELS.find((p) => p.label === 'worker (http2)')!);
