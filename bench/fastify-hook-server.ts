// The floor of a Fastify-native fast path: a Fastify app whose first onRequest hook answers the same bytes and
// headers as a cache hit, with no logger, no other hook and no route work. Any design that answers cached
// URLs from a hook costs at least this (routing, Fastify's request and reply, the hook chain); the service's
// listener answers before all of it (src/plugins/app/hot-path.ts). Run by bench/fast-path-floor.ts.
import '../src/process/next-tick-shape.js';
import Fastify from 'fastify';

const body = process.env.BARE_BODY ?? '{}';
const headers = JSON.parse(process.env.BARE_HEADERS ?? '{}') as Record<string, string>;
const app = Fastify({ logger: false, keepAliveTimeout: 60_000 });
app.addHook('onRequest', (_request, reply, done) => {
  reply.headers(headers).type('application/json; charset=utf-8').send(body);
  done();
});
app.get('/*', async () => body);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`LISTENING ${new URL(address).port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
