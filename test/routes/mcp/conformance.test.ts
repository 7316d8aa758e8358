// The official MCP conformance suite (@modelcontextprotocol/conformance, its CLI as its README runs it) against
// the service on loopback: every server scenario that applies to a server without test-only tools must pass.
// Each scenario the suite lists is either run here or left out below with the reason; a scenario a later version
// of the suite adds fails the last test until it is placed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startApp } from '../../helpers/app.js';
import { tempDir } from '../../helpers/config.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../../node_modules/@modelcontextprotocol/conformance/dist/index.js');

const RUN = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

const TEST_ONLY_TOOL = 'calls a tool the suite asks a server to add for it (test_simple_text, test_image_content, …)';
const LEFT_OUT: Record<string, string> = {
  'logging-set-level': 'the server declares no logging capability: a stateless request has no later messages to log into',
  'completion-complete': 'the server offers no prompts or resource templates, so there is nothing to complete',
  'tools-call-simple-text': TEST_ONLY_TOOL,
  'tools-call-image': TEST_ONLY_TOOL,
  'tools-call-audio': TEST_ONLY_TOOL,
  'tools-call-embedded-resource': TEST_ONLY_TOOL,
  'tools-call-mixed-content': TEST_ONLY_TOOL,
  'tools-call-with-logging': TEST_ONLY_TOOL,
  'tools-call-error': TEST_ONLY_TOOL,
  'tools-call-with-progress': TEST_ONLY_TOOL,
  'tools-call-sampling': TEST_ONLY_TOOL,
  'tools-call-elicitation': TEST_ONLY_TOOL,
  'json-schema-2020-12': `${TEST_ONLY_TOOL}; the tools' own schemas are held to the SDK's client in tools.test.ts`,
  'elicitation-sep1034-defaults': `${TEST_ONLY_TOOL}; the server never asks the agent for input`,
  'elicitation-sep1330-enums': `${TEST_ONLY_TOOL}; the server never asks the agent for input`,
  'server-sse-polling': 'needs sessions and server-sent event streams: /mcp is stateless and answers in JSON',
  'server-sse-multiple-streams': 'needs sessions and server-sent event streams: /mcp is stateless and answers in JSON',
  'resources-list': 'the server offers no resources (its data are tools)',
  'resources-read-text': 'the server offers no resources',
  'resources-read-binary': 'the server offers no resources',
  'resources-templates-read': 'the server offers no resources',
  'resources-subscribe': 'the server offers no resources',
  'resources-unsubscribe': 'the server offers no resources',
  'prompts-list': 'the server offers no prompts',
  'prompts-get-simple': 'the server offers no prompts',
  'prompts-get-with-args': 'the server offers no prompts',
  'prompts-get-embedded-resource': 'the server offers no prompts',
  'prompts-get-with-image': 'the server offers no prompts',
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

for (const scenario of RUN) {
  test(`conformance: ${scenario} passes`, async (t) => {
    const running = await startApp(t, { transport: 'socket' });
    const out = tempDir(t, 'mdp-conformance-');
    const { stdout } = await run(process.execPath, [CLI, 'server', '--url', `${running.url}/mcp`, '--scenario', scenario, '-o', out]);
    const [dir] = readdirSync(out).filter((name) => name.startsWith(`server-${scenario}-`));
    assert.ok(dir, `no results for ${scenario}: ${stdout}`);
    const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[];
    assert.deepEqual(
      checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING'),
      [],
    );
    assert.ok(
      checks.some((check) => check.status === 'SUCCESS'),
      `${scenario}: ${JSON.stringify(checks)}`,
    );
  });
}

test('every server scenario of the suite is run above or left out with a reason', async () => {
  const { stdout } = await run(process.execPath, [CLI, 'list', '--server']);
  const listed = [...stdout.matchAll(/^\s+- ([\w-]+) \[/gm)].map((match) => match[1] as string);
  assert.ok(listed.length >= 20, stdout);
  assert.deepEqual(
    listed.filter((name) => !RUN.includes(name) && LEFT_OUT[name] === undefined),
    [],
    'scenarios neither run nor left out with a reason',
  );
  assert.deepEqual(
    [...RUN, ...Object.keys(LEFT_OUT)].filter((name) => !listed.includes(name)),
    [],
    'scenarios named here the suite no longer has',
  );
});
