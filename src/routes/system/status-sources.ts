// What the service's status is built from, for /api/system/status (and its stream topic) and the MCP tool
// get_service_status alike: the composition root's state, and what the metrics plugin counts (cache outcomes
// per upstream, the MCP server's use).
import type { FastifyInstance } from 'fastify';
import type { StatusSources } from '../../services/system-status.js';

export function statusSources(app: FastifyInstance, startedAt: Date): StatusSources {
  const metrics = app.hasDecorator('metrics') ? app.metrics : undefined;
  return {
    deps: app.deps,
    startedAt,
    outcomes: metrics?.outcomesByUpstream,
    mcp: app.deps.config.mcp.enabled ? metrics?.mcp.use() : undefined,
  };
}
