import { measure } from './bench/autocannon-run.js';
import { cpuMicros } from './bench/cache-hit.js';
import { startService } from './bench/processes.js';
import { request } from 'undici';
const service = await startService({ STATE_DIR: '/tmp/mcpproto/state2', RATE_LIMIT_PER_MINUTE: '0', CACHE_QUOTE_FRESH_SECONDS: '3600', LOG_LEVEL: process.env.LL ?? 'info' });
const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const tool = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_quotes', arguments: { symbols: ['IBM'] } } });
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
await (await request(`${service.url}/mcp`, { method: 'POST', headers: H, body: tool })).body.dump();
await (await request(`${service.url}/api/provider-a/quote?symbol=IBM`)).body.dump();
const cases: [string, string, any][] = [
  ['GET quote', '/api/provider-a/quote?symbol=IBM', {}],
  ['GET live', '/api/system/live', {}],
  ['GET status', '/api/system/status', {}],
  ['POST ping', '/mcp', { method: 'POST', headers: H, body: ping }],
  ['POST tool', '/mcp', { method: 'POST', headers: H, body: tool }],
];
for (const [, path, o] of cases) await measure(service.url + path, { duration: 1, ...o });
for (const [name, path, o] of cases) {
  const before = cpuMicros(service);
  const f = await measure(service.url + path, { duration: 3, connections: Number(process.env.CONN ?? 50), ...o });
  console.log(name.padEnd(12), f.requestsPerSecond, 'rps', ((cpuMicros(service) - before) / (f.requestsPerSecond * 3)).toFixed(0), 'µs cpu/req', 'p50', f.p50Ms);
}
await service.stop();
