/**
 * The example's gRPC backend: `node examples/grpc/server.ts [address] [name]`
 * (default 127.0.0.1:50051, name "echo-1").
 */
import { startEchoServer } from './service.ts';

const address = process.argv[2] ?? '127.0.0.1:50051';
const name = process.argv[3] ?? 'echo-1';
const { port } = await startEchoServer(name, address);
console.log(`echo gRPC server ${name} on port ${port}`);
