// The baseline: a bare node:http server answering the same bytes and headers as a cache hit, written as
// fast as node:http allows (the header list is built once, and nextTick's shape is pinned as in the
// service), so the ratio is not flattered.
import '../src/process/next-tick-shape.js';
import { createServer } from 'node:http';

const body = process.env.BARE_BODY ?? '{}';
const given = JSON.parse(process.env.BARE_HEADERS ?? '{}') as Record<string, string>;
const head = [
  ...Object.entries(given).flat(),
  ...['content-type', 'application/json; charset=utf-8', 'content-length', String(Buffer.byteLength(body))],
];
const server = createServer((_req, res) => {
  res.writeHead(200, head).end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
