// A new reader reaches each of these questions' answers from the README in at most two links: the README links to
// a page, or to a page that links to it, and the answer's heading is on that page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { ROOT } from './pages.js';

/** The reader's questions, each with the page and heading that answers it. */
const QUESTIONS: { question: string; page: string; heading: string }[] = [
  { question: 'connect IBKR', page: 'docs/how-to/connect-ibkr.md', heading: 'Connect Interactive Brokers (IBKR)' },
  { question: 'connect Tastytrade', page: 'docs/how-to/connect-tastytrade.md', heading: 'Connect Tastytrade' },
  { question: 'keep broker data local', page: 'docs/how-to/keep-broker-data-local.md', heading: 'Keep broker data local' },
  { question: 'what each X-Data-Source value means', page: 'docs/reference/headers.md', heading: 'X-Data-Source' },
  { question: 'what each freshness value means', page: 'docs/reference/headers.md', heading: 'X-Data-Freshness' },
  {
    question: 'what each freshness value means, in full',
    page: 'docs/reference/freshness.md',
    heading: 'Freshness: how fresh every price is',
  },
  { question: 'what each error code means', page: 'docs/reference/errors.md', heading: 'Codes' },
  { question: 'every setting', page: 'docs/reference/configuration.md', heading: 'Configuration' },
  { question: 'run on Redis Cluster', page: 'docs/how-to/run-on-redis.md', heading: 'Cluster' },
  { question: 'run on Redis Sentinel', page: 'docs/how-to/run-on-redis.md', heading: 'Sentinel' },
  { question: 'use the stream from a browser', page: 'docs/reference/stream.md', heading: 'From a browser' },
  { question: 'deploy with compose', page: 'docs/how-to/deploy-container.md', heading: 'Compose: three replicas behind nginx' },
  { question: 'run on Kubernetes', page: 'docs/how-to/run-on-kubernetes.md', heading: 'Run on Kubernetes' },
  {
    question: 'monitor with Prometheus and Grafana',
    page: 'docs/how-to/monitor-with-prometheus.md',
    heading: 'Monitor with Prometheus and Grafana',
  },
  { question: 'what to do when an alert fires', page: 'docs/how-to/runbooks.md', heading: 'MdpUpstreamCircuitOpen' },
  { question: 'where each benchmark figure comes from', page: 'docs/benchmarks.md', heading: 'Benchmarks' },
  { question: 'connect an AI agent', page: 'docs/how-to/connect-an-ai-agent.md', heading: 'Connect an AI agent' },
  { question: 'what each MCP tool takes and answers', page: 'docs/reference/mcp-tools.md', heading: 'Tools' },
  {
    question: 'why agents and pages share one cache',
    page: 'docs/explanation/agents-share-the-cache.md',
    heading: 'Why agents and pages share one cache',
  },
];

interface Node {
  type: string;
  url?: string;
  value?: string;
  children?: Node[];
}

function walk(node: Node, visit: (node: Node) => void): void {
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

/** The Markdown pages a page links to, as paths from the repository's root. */
function linkedPages(page: string): string[] {
  const found = new Set<string>();
  walk(fromMarkdown(readFileSync(join(ROOT, page), 'utf8')) as Node, (node) => {
    if (node.type !== 'link' || node.url === undefined || /^[a-z]+:/.test(node.url)) return;
    const path = node.url.split('#')[0] ?? '';
    if (path.endsWith('.md')) found.add(normalize(join(dirname(page), path)));
  });
  return [...found];
}

/** A heading's text, code spans included, as the page shows it. */
function headings(page: string): string[] {
  const found: string[] = [];
  const text = (node: Node): string => node.value ?? (node.children ?? []).map(text).join('');
  walk(fromMarkdown(readFileSync(join(ROOT, page), 'utf8')) as Node, (node) => {
    if (node.type === 'heading') found.push(text(node));
  });
  return found;
}

test('each reader question is answered within two links of the README', () => {
  const depth = new Map<string, number>([['README.md', 0]]);
  let frontier = ['README.md'];
  for (const step of [1, 2]) {
    frontier = frontier.flatMap(linkedPages).filter((page) => !depth.has(page));
    for (const page of frontier) depth.set(page, step);
  }
  for (const { question, page, heading } of QUESTIONS) {
    assert.ok((depth.get(page) ?? 99) <= 2, `${question}: ${page} is not within two links of the README`);
    assert.ok(headings(page).includes(heading), `${question}: ${page} has no heading "${heading}"`);
  }
});
