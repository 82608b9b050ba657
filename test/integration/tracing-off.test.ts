/**
 * Without `tracing:` no OpenTelemetry module is loaded in the router's process (a real CLI
 * process under test/harness/module-probe.mjs, an `--import` hook that reports the first load
 * of a watched package); with it, they are (the probe can fail). One exception, not ours:
 * prom-client (imported by app/metrics/ whatever the config) has its process CPU metric
 * `require('@opentelemetry/api')` when it loads (the API only, for its own exemplars), so the API
 * package is in every router process — never the SDK, core, resources or an exporter.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { spawnCli } from '../harness/cli.ts';
import { tempDir } from '../harness/router.ts';

const SDK = [
  '@opentelemetry/core',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/resources',
  '@opentelemetry/otlp-exporter-base',
  '@opentelemetry/otlp-transformer',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/exporter-trace-otlp-http',
];
const WATCHED = ['@opentelemetry/api', ...SDK].join(',');

async function loaded(withTracing: boolean, withAdmin = true): Promise<string[]> {
  const dir = await tempDir();
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    stringify({
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      log: { format: 'json' },
      ...(withAdmin ? { admin: { address: '127.0.0.1:0' } } : {}),
      ...(withTracing ? { tracing: { endpoint: 'http://127.0.0.1:9/v1/traces' } } : {}),
    }),
  );
  const child = spawnCli(file, {
    nodeArgs: ['--import', './test/harness/module-probe.mjs'],
    env: { SWB_PROBE_PACKAGES: WATCHED },
  });
  try {
    await child.waitForLog((l) => l.msg === 'switchboard started');
    return child.logs.filter((l) => String(l.msg).startsWith('module-probe:')).map((l) => String(l.msg));
  } finally {
    child.kill('SIGTERM');
    await child.exited;
  }
}

describe('tracing off', () => {
  it('loads no OpenTelemetry SDK, core or exporter module (with tracing: it does)', async () => {
    expect(await loaded(false, false)).toEqual(['module-probe: loaded @opentelemetry/api']); // prom-client's
    expect(await loaded(false)).toEqual(['module-probe: loaded @opentelemetry/api']);
    const on = await loaded(true);
    // (The SDK's sdk-trace is not among them: the router makes its finished spans itself, app/tracing/record-span.ts.)
    for (const name of [
      '@opentelemetry/otlp-transformer',
      '@opentelemetry/resources',
      '@opentelemetry/exporter-trace-otlp-proto',
    ])
      expect(on).toContain(`module-probe: loaded ${name}`);
  });
});
