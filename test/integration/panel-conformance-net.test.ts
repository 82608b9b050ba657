/**
 * The panel conformance suite (test/conformance/panel.ts) against the `net` panel. One file per
 * panel so the five run in parallel.
 */
import { afterAll } from 'vitest';
import { closePki, PANELS, panelConformance } from '../conformance/panel.ts';

afterAll(closePki);
panelConformance(PANELS.find((p) => p.label === 'net')!);
