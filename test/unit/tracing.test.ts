/**
 * Tracing without the network: the strict `traceparent` parser, and the spans the record tracer
 * makes (app/tracing/) read back from OpenTelemetry's InMemorySpanExporter.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { startTracing } from '../../app/tracing/start.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import { tracingSchema } from '../../src/config/tracing.ts';
import type { Request } from '../../src/contracts/types.ts';
import { describeRequest, logRequest } from '../../src/data-path/access-record.ts';
import { parseTraceparent } from '../../src/tracing/traceparent.ts';
import { tracing } from '../../src/tracing/tracer.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('reads version 00 and the sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual({ traceId: TRACE, spanId: PARENT, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-00`)?.sampled).toBe(false);
  });
  it.each([
    ['absent', undefined],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['version 00 with more fields', `00-${TRACE}-${PARENT}-01-extra`],
    ['not hex', `00-${TRACE.slice(0, 31)}g-${PARENT}-01`],
  ])('ignores %s', (_name, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
  it('reads the first fields of a future version', () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01-later`)?.traceId).toBe(TRACE);
  });
});

function request(headers: Record<string, string>): Request {
  return {
    protocol: 'http1',
    host: 'a.test',
    path: '/x',
    method: 'GET',
    clientIp: '127.0.0.1',
    clientPort: 5000,
    sni: undefined,
    header: (name: string) => headers[name.toLowerCase()],
  } as unknown as Request;
}

/** A full batch is exported on the next turn (bounded-processor.ts). */
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

function record(): AccessRecord {
  return { listener: 'web', client: '', bytesIn: 0, bytesOut: 0, durationMs: 0, result: 'ok' };
}

describe('the record tracer', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  function start(ratio: number): InMemorySpanExporter {
    const exporter = new InMemorySpanExporter();
    const config = tracingSchema.parse({ endpoint: 'http://127.0.0.1:1/v1/traces', sampler: { ratio }, batchSize: 1 });
    const running = startTracing(config, exporter);
    close = () => running.close();
    return exporter;
  }

  it('a sampled parent: one SERVER span, child of the caller, with the record on the access line', async () => {
    const exporter = start(0);
    const r = record();
    describeRequest(r, request({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'k=v' }));
    r.product = 'shop';
    r.cluster = 'web';
    r.status = 503;
    r.result = 'ok';
    r.policy = 'admin';
    r.action = 'answer';
    r.durationMs = 12;
    logRequest(r, undefined);
    await nextTurn();
    const [span] = exporter.getFinishedSpans();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    expect(span?.spanContext().traceId).toBe(TRACE);
    expect(span?.parentSpanContext?.spanId).toBe(PARENT);
    expect(span?.kind).toBe(1); // SpanKind.SERVER
    expect(span?.name).toBe('GET');
    expect(span?.status.code).toBe(2); // ERROR: a 5xx
    expect(span?.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/x',
      'client.address': '127.0.0.1',
      'client.port': 5000,
      'switchboard.product': 'shop',
      'switchboard.cluster': 'web',
      'switchboard.result': 'ok',
      'http.response.status_code': 503,
      'switchboard.policy': 'admin',
      'switchboard.policy.action': 'answer',
    });
    expect(r.trace_id).toBe(TRACE);
    expect(r.span_id).toBe(span?.spanContext().spanId);
  });

  it('an unsampled parent: no span; no parent: the ratio decides (1: a new root, 0: none)', async () => {
    const exporter = start(0);
    const a = record();
    describeRequest(a, request({ traceparent: `00-${TRACE}-${PARENT}-00` }));
    logRequest(a, undefined);
    const b = record();
    describeRequest(b, request({}));
    logRequest(b, undefined);
    await nextTurn();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    expect(a.trace_id).toBeUndefined();
  });

  it('ratio 1 without a parent: a root span with a fresh trace id', async () => {
    const exporter = start(1);
    const r = record();
    describeRequest(r, request({ traceparent: 'garbage' }));
    logRequest(r, undefined);
    await nextTurn();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    const [span] = exporter.getFinishedSpans();
    expect(span?.parentSpanContext).toBeUndefined();
    expect(r.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(r.trace_id).not.toBe(TRACE);
  });

  it('close uninstalls the tracer', async () => {
    start(1);
    expect(tracing.current).toBeDefined();
    await close?.();
    close = undefined;
    expect(tracing.current).toBeUndefined();
  });
});
