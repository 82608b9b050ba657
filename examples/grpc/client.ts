/**
 * The example's gRPC client: one unary call and one bidirectional stream through the router.
 * `node examples/grpc/client.ts [router address]` (default 127.0.0.1:8080).
 */
import * as grpc from '@grpc/grpc-js';
import { loadEcho } from './service.ts';

const target = process.argv[2] ?? '127.0.0.1:8080';
const Echo = loadEcho();
const client = new Echo(target, grpc.credentials.createInsecure());

const metadata = new grpc.Metadata();
metadata.set('x-client', 'example');
client.Say({ message: 'hello' }, metadata, (err: grpc.ServiceError | null, reply: unknown) => {
  if (err) console.error('Say failed:', err.code, err.details);
  else console.log('Say →', reply);
  const chat = client.Chat();
  chat.on('data', (reply: unknown) => console.log('Chat →', reply));
  chat.on('status', (status: grpc.StatusObject) => {
    console.log('Chat status', status.code, status.metadata.get('x-chat-trailer'));
    client.close();
  });
  for (const m of ['one', 'two', 'three']) chat.write({ message: m });
  chat.end();
});
