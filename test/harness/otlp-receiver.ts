/**
 * A loopback OTLP/HTTP JSON receiver: `POST /v1/traces` bodies decoded into flat spans (ids in
 * hex, as OTLP JSON carries them). `stall: true` never answers (a slow collector).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One received span, flattened. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 2 SERVER, 3 CLIENT. */
  readonly kind: number;
  /** OTLP status code: 2 ERROR. */
  readonly status: number;
  readonly attributes: Record<string, string | number | boolean>;
  readonly service: string;
  /** Start and end, nanoseconds since the epoch. */
  readonly start: bigint;
  readonly end: bigint;
  /** The span's events: name and time (nanoseconds since the epoch). */
  readonly events: readonly { readonly name: string; readonly time: bigint }[];
}

export interface OtlpReceiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** POST requests received. */
  readonly posts: number;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? '';
}

function attributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** Starts a receiver on 127.0.0.1:0. */
export async function startOtlpReceiver(options: { stall?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let posts = 0;
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts++;
      if (options.stall === true) {
        held.push(res);
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributes(rs.resource?.attributes)['service.name'] ?? '');
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              status: s.status?.code ?? 0,
              attributes: attributes(s.attributes),
              service,
              start: BigInt(s.startTimeUnixNano),
              end: BigInt(s.endTimeUnixNano),
              events: (s.events ?? []).map((e: { name: string; timeUnixNano: string | number }) => ({
                name: e.name,
                time: BigInt(e.timeUnixNano),
              })),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    get posts() {
      return posts;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
