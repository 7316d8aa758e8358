// Market-data cache hits through compose's nginx (deploy/nginx.conf, run here by test/helpers/nginx.ts) against
// the service alone and a bare node:http server sending the same bytes, in alternating rounds of one run; then
// broker answers through nginx, and how many of them it stored (target 0).
import { request } from 'undici';
import { type Figures, measure, median, row } from './autocannon-run.js';
import { warmUp } from './cache-hit.js';
import { type Child, startChild, startService } from './processes.js';
import { nginxInstalled, startNginx } from '../test/helpers/nginx.js';

const PATH = '/api/provider-a/quote?symbol=IBM';
const BROKER_PATHS = ['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes?symbols=AAPL,MSFT'];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);

export default async function nginxCacheBench(): Promise<void> {
  if (!nginxInstalled()) {
    console.log('\nnginx cache: skipped (no /usr/sbin/nginx; Debian package nginx-light)');
    return;
  }
  const env = { LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0', CACHE_QUOTE_FRESH_SECONDS: '3600' };
  // As each is deployed: alone on its port, or behind nginx, which TRUST_PROXY names (and which takes the
  // service's micro-cache out of play: with a proxy in front, the caller is read from X-Forwarded-For).
  const service = await startService(env);
  const behind = await startService({ ...env, TRUST_PROXY: '127.0.0.1' });
  let bare: Child | undefined;
  const nginx = await startNginx(behind.url);
  try {
    // The service's own answer (body and headers) is what the bare server replays.
    const { body, headers } = await warmUp(service.url + PATH);
    bare = await startChild('bench/bare-server.ts', { BARE_BODY: body, BARE_HEADERS: JSON.stringify(headers) }, /LISTENING (\d+)/);
    for (const url of [bare.url, service.url, nginx.url]) await measure(url + PATH, { duration: 2 });
    const rounds: Record<'bare' | 'service' | 'nginx', Figures[]> = { bare: [], service: [], nginx: [] };
    for (let i = 0; i < ROUNDS; i += 1) {
      rounds.bare.push(await measure(bare.url + PATH, { duration: ROUND_SECONDS }));
      rounds.service.push(await measure(service.url + PATH, { duration: ROUND_SECONDS }));
      rounds.nginx.push(await measure(nginx.url + PATH, { duration: ROUND_SECONDS }));
    }
    console.log(
      `\nmarket-data cache hits, ${Buffer.byteLength(body)}-byte body, 50 connections, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s`,
    );
    for (let i = 0; i < ROUNDS; i += 1) {
      console.log(row(`round ${i + 1} bare node:http`, rounds.bare[i]!));
      console.log(row(`round ${i + 1} service alone`, rounds.service[i]!));
      console.log(row(`round ${i + 1} compose nginx + service`, rounds.nginx[i]!));
    }
    const ratio = (name: 'service' | 'nginx') =>
      median(rounds[name].map((f, i) => f.requestsPerSecond / rounds.bare[i]!.requestsPerSecond));
    console.log(`median ratio to bare node: service alone ${ratio('service').toFixed(2)}, through nginx ${ratio('nginx').toFixed(2)}`);

    let answered = 0;
    for (let i = 0; i < 20; i += 1) {
      for (const path of BROKER_PATHS) {
        const res = await request(nginx.url + path);
        await res.body.dump();
        if (res.statusCode === 200) answered += 1;
      }
    }
    const stored = nginx.storedKeys().filter((key) => key.includes('/api/broker/')).length;
    console.log(
      `broker answers through nginx: ${answered} of ${20 * BROKER_PATHS.length} answered 200, stored by nginx: ${stored} (target 0: ${stored === 0 ? 'met' : 'NOT met'})`,
    );
  } finally {
    await nginx.stop();
    await bare?.stop();
    await service.stop();
    await behind.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await nginxCacheBench();
