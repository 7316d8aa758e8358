// The hot path answers outside Fastify's hooks. Every hook a route it may answer runs must be accounted
// for in HOOKS_ACCOUNTED_FOR (hot-path.ts): add a hook (compression, auth, Vary) and this fails until the
// hot path reproduces it or stands aside. Plugins also declare their order: registered out of order, the
// app refuses to start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { buildApp } from '../../../src/app.js';
import { HOOKS_ACCOUNTED_FOR } from '../../../src/plugins/app/hot-path.js';
import { rateLimiting } from '../../../src/plugins/external/rate-limit.js';
import providerARoutes from '../../../src/routes/provider-a/index.js';
import { testConfig } from '../../helpers/config.js';

/** The routes whose answers go through sendCached, so the hot path may replay them. */
const CACHED =
  /^(api\/provider-a\/(quote|technical|search|daily|query)|api\/provider-b\/dividends|api\/market\/overview|api\/broker\/(accounts|positions|quotes|health))$/;

/** `route -> kind -> hook names`, read from Fastify's own listing. */
function hooksByRoute(listing: string): Map<string, Map<string, string[]>> {
  const routes = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const line of listing.split('\n')) {
    const route = /([\w/.*:-]+) \(([A-Z, ]+)\)$/.exec(line);
    if (route !== null) {
      current = CACHED.test(route[1] as string) ? new Map() : undefined;
      if (current !== undefined) routes.set(`${route[2]} ${route[1]}`, current);
      continue;
    }
    const hooks = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (hooks !== null && current !== undefined)
      current.set(
        hooks[1] as string,
        (JSON.parse(hooks[2] as string) as string[]).map((n) => n.replace(/\(\)$/, '')),
      );
  }
  return routes;
}

/** The hot path answers under every configuration: the hooks are read under the defaults and with every option set. */
const CONFIGURATIONS: Readonly<Record<string, Record<string, string>>> = {
  defaults: { CORS_ORIGINS: '*' },
  'every option set': {
    CORS_ORIGINS: 'https://dash.example.com',
    TRUST_PROXY: '10.0.0.0/8',
    BROKER: 'ibkr',
    BROKER_TOKEN: 'a-broker-token-of-32-characters!',
    BROKER_ALLOW_FROM: '10.0.0.0/8',
    METRICS_TOKEN: 'a-metrics-token-of-32-characters',
  },
};

for (const [limit, [configuration, env]] of ['0', '600'].flatMap((l) => Object.entries(CONFIGURATIONS).map((c) => [l, c] as const))) {
  test(`every hook of a cached route is one the hot path accounts for (RATE_LIMIT_PER_MINUTE=${limit}, ${configuration})`, async (t) => {
    const app = await buildApp(testConfig(t, { RATE_LIMIT_PER_MINUTE: limit, ...env }), { logger: pino({ level: 'silent' }) });
    t.after(() => app.close());
    await app.ready();
    const routes = hooksByRoute(app.printRoutes({ includeHooks: true, commonPrefix: false }));
    assert.ok(routes.size >= 20, `found ${routes.size} cached routes (GET and HEAD)`);
    const unaccounted: string[] = [];
    for (const [route, kinds] of routes) {
      for (const [kind, names] of kinds) {
        for (const name of names) if (HOOKS_ACCOUNTED_FOR[kind]?.[name] === undefined) unaccounted.push(`${route}: ${kind} ${name}`);
        // One anonymous hook is the rate limiter's; a second is something new.
        if (names.filter((n) => n === 'anonymous').length > (limit === '0' ? 0 : 1))
          unaccounted.push(`${route}: ${kind} another anonymous hook`);
      }
    }
    assert.deepEqual(unaccounted, []);
  });
}

test('an added hook the hot path does not account for is caught', () => {
  const listing = 'api/provider-a/quote (GET)\n• (onRequest) ["edgeHeaders()"]\n• (onSend) ["compress()"]';
  const kinds = hooksByRoute(listing).get('GET api/provider-a/quote');
  assert.deepEqual(kinds?.get('onSend'), ['compress']);
  assert.equal(HOOKS_ACCOUNTED_FOR.onSend?.compress, undefined);
});

test('plugins registered out of order refuse to start, naming what is missing', async () => {
  const early = Fastify();
  early
    .decorate('deps', {} as never)
    .decorate('hotPath', {} as never)
    .decorate('liveTopics', {} as never);
  early.register(providerARoutes);
  await assert.rejects(async () => {
    await early.ready();
  }, /mdp-error-handling/);
  const limiter = Fastify();
  limiter.register(rateLimiting, { limiter: undefined });
  await assert.rejects(async () => {
    await limiter.ready();
  }, /mdp-request-hygiene/);
});
