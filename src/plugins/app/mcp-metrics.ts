// MCP tool calls by tool and outcome, and how long each took: recorded by the /mcp route (routes/mcp/), read
// by /metrics and by /api/system/status. /mcp is stateless (every POST stands alone, on any replica), so it holds
// no session: the sessions gauge is always 0, exported so that a dashboard's panel shows 0 rather than no data.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type ToolOutcome = 'ok' | 'error';

/** What /api/system/status shows of the MCP server: since start, on this replica. */
export interface McpUse {
  sessions: number;
  calls: number;
  errors: number;
  tools: Record<string, { calls: number; errors: number }>;
}

export class McpMetrics {
  private readonly counts = new Map<string, { calls: number; errors: number }>();
  private readonly duration: Histogram<'tool'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const counts = this.counts;
    new Counter({
      name: 'mdp_mcp_tool_calls_total',
      help: 'MCP tool calls answered, by tool and outcome (ok, or error: a tool result with isError).',
      labelNames: ['tool', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const [tool, { calls, errors }] of counts) {
          this.inc({ tool, outcome: 'ok' }, calls - errors);
          if (errors > 0) this.inc({ tool, outcome: 'error' }, errors);
        }
      },
    });
    this.duration = new Histogram({
      name: 'mdp_mcp_tool_call_duration_seconds',
      help: 'Time to answer an MCP tool call, by tool (the service reads included, the HTTP request around it not).',
      labelNames: ['tool'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    new Gauge({
      name: 'mdp_mcp_sessions',
      help: 'Open MCP sessions: always 0, /mcp is stateless (every request stands alone, on any replica).',
      registers,
      collect() {
        this.set(0);
      },
    });
  }

  record(tool: string, outcome: ToolOutcome, seconds: number): void {
    let counts = this.counts.get(tool);
    if (counts === undefined) {
      counts = { calls: 0, errors: 0 };
      this.counts.set(tool, counts);
    }
    counts.calls += 1;
    if (outcome === 'error') counts.errors += 1;
    this.duration.observe({ tool }, seconds);
  }

  use(): McpUse {
    const tools = Object.fromEntries([...this.counts].map(([tool, counts]) => [tool, { ...counts }]));
    const sum = (pick: 'calls' | 'errors') => [...this.counts.values()].reduce((total, counts) => total + counts[pick], 0);
    return { sessions: 0, calls: sum('calls'), errors: sum('errors'), tools };
  }
}
