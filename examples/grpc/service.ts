/**
 * The Echo service (echo.proto) for the gRPC example and tests: loading the proto, and a
 * server whose calls echo messages, report their server name, return metadata in trailers, and
 * fail on request with a chosen status.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';

/** The proto file next to this module. */
export const PROTO = fileURLToPath(new URL('./echo.proto', import.meta.url));

/** The Echo service's client constructor and definition. */
export function loadEcho(): grpc.ServiceClientConstructor {
  const def = loader.loadSync(PROTO, { keepCase: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    switchboard: { example: { Echo: grpc.ServiceClientConstructor } };
  };
  return pkg.switchboard.example.Echo;
}

/** One Echo message (echo.proto `EchoRequest`). */
export interface EchoRequest {
  message: string;
}

/** One Echo reply (echo.proto `EchoReply`). */
export interface EchoReply {
  message: string;
  server: string;
}

/** The methods of a generated Echo client (grpc-js builds them at run time). */
export interface EchoClient extends grpc.Client {
  Say(
    request: EchoRequest,
    metadata: grpc.Metadata,
    callback: (err: grpc.ServiceError | null, reply: EchoReply) => void,
  ): grpc.ClientUnaryCall;
  Say(
    request: EchoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, reply: EchoReply) => void,
  ): grpc.ClientUnaryCall;
  Chat(metadata?: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<EchoRequest, EchoReply>;
}

/** A client of the Echo service at `target` (plaintext), with optional channel options. */
export function echoClient(target: string, options: grpc.ChannelOptions = {}): EchoClient {
  const Echo = loadEcho();
  return new Echo(target, grpc.credentials.createInsecure(), options) as unknown as EchoClient;
}

/** Starts an Echo server on `address` (port 0 allowed); resolves with the bound port. */
export async function startEchoServer(
  name: string,
  address = '127.0.0.1:0',
): Promise<{ server: grpc.Server; port: number }> {
  const Echo = loadEcho();
  const server = new grpc.Server();
  server.addService(Echo.service, {
    Say(call: grpc.ServerUnaryCall<EchoRequest, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const { message } = call.request;
      if (message.startsWith('fail:')) {
        // "fail:5" answers NOT_FOUND (5) with trailers, to check statuses pass through.
        const trailer = new grpc.Metadata();
        trailer.set('x-failed', 'yes');
        callback({ code: Number(message.slice(5)), details: 'asked to fail', metadata: trailer });
        return;
      }
      const trailer = new grpc.Metadata();
      trailer.set('x-echo-trailer', `seen ${call.metadata.get('x-client').join(',')}`);
      callback(null, { message, server: name }, trailer);
    },
    Chat(call: grpc.ServerDuplexStream<EchoRequest, unknown>) {
      call.on('data', (req: EchoRequest) => call.write({ message: req.message, server: name }));
      call.on('end', () => {
        const trailer = new grpc.Metadata();
        trailer.set('x-chat-trailer', 'bye');
        call.end(trailer);
      });
      call.on('error', () => {});
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port };
}
