/**
 * The example's gRPC client: one unary call and one bidirectional stream through the router.
 * `node examples/grpc/client.ts [router address]` (default 127.0.0.1:8080).
 */
import * as grpc from '@grpc/grpc-js';
import { echoClient } from './service.ts';

const target = process.argv[2] ?? '127.0.0.1:8080';
const client = echoClient(target);

const metadata = new grpc.Metadata();
metadata.set('x-client', 'example');
client.Say({ message: 'hello' }, metadata, (err, reply) => {
  if (err) console.error('Say failed:', err.code, err.details);
  else console.log('Say →', reply);
  const chat = client.Chat();
  chat.on('error', (e) => console.error('Chat failed:', e.message));
  chat.on('data', (reply) => console.log('Chat →', reply));
  chat.on('status', (status: grpc.StatusObject) => {
    console.log('Chat status', status.code, status.metadata.get('x-chat-trailer'));
    client.close();
  });
  for (const m of ['one', 'two', 'three']) chat.write({ message: m });
  chat.end();
});
