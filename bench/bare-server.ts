// The baseline: a bare node:http server answering the same bytes and headers as a cache hit.
import { createServer } from 'node:http';

const body = process.env.BARE_BODY ?? '{}';
const headers = JSON.parse(process.env.BARE_HEADERS ?? '{}') as Record<string, string>;
const server = createServer((_req, res) => {
  res.writeHead(200, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
