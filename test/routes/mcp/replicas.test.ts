// Two replicas on one Redis (a random key prefix) behind a balancer without sticky sessions: one agent's
// requests go to each in turn, from initialize on, and its calls share one cache entry and one provider call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SimRequestEvent } from '../../../src/sandbox/simulated-upstream.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';
import { callTool, mcpClient } from '../../helpers/mcp-client.js';
import { REDIS_URL, redisPrefix } from '../../store/redis-helper.js';

test("two replicas on Redis serve one agent's requests in turn: the same answers, one provider call", async (t) => {
  const env = { ...UNCAPPED, ...NO_FALLBACK, REDIS_URL, REDIS_KEY_PREFIX: redisPrefix(t) };
  const first = await startApp(t, { env, transport: 'socket' });
  // The second replica reaches the first's simulated providers: one deployment, one upstream identity.
  const second = await startApp(t, {
    env,
    transport: 'socket',
    configure: (config) => ({ ...config, alphaVantage: first.config.alphaVantage, overview: first.config.overview }),
  });
  const calls: string[] = [];
  first.sandbox.alphaVantage.on('arrival', (event: SimRequestEvent) => calls.push(String(event.query.get('function'))));

  const replicas = [first.url, second.url];
  const served: string[] = [];
  let turn = 0;
  const agent = await mcpClient(t, first, {
    base: () => {
      const url = replicas[turn++ % 2] as string;
      served.push(url);
      return url;
    },
  });
  const answers = [];
  for (let i = 0; i < 6; i += 1) answers.push(await callTool(agent, 'get_quotes', { symbols: ['IBM'] }));
  assert.ok(answers.every((answer) => answer.isError !== true));
  assert.equal(new Set(answers.map((answer) => JSON.stringify(answer.structuredContent))).size, 1, 'the same answer from both');
  assert.deepEqual(calls, ['GLOBAL_QUOTE'], 'one provider call for the deployment');
  const toolLines = (scan: typeof first.scan) =>
    scan.lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request' && line.tool === 'get_quotes').length;
  assert.ok(
    toolLines(first.scan) >= 2 && toolLines(second.scan) >= 2,
    `calls answered: ${toolLines(first.scan)} and ${toolLines(second.scan)}`,
  );
  assert.ok(served.includes(first.url) && served.includes(second.url));
});
