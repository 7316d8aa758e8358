// Serves the dashboard (public/: plain HTML, CSS and JS, no build step) at `/`. The three files are read
// once at start and kept in memory with an ETag; the page talks only to this service (strict CSP).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type {} from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from './route-plugin.js';

/** public/ sits two levels above this file both in src/routes and in dist/routes. */
const PUBLIC_DIR = new URL('../../public/', import.meta.url);

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard.css': { file: 'dashboard.css', type: 'text/css; charset=utf-8' },
  '/dashboard.js': { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
};

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function load(file: string, type: string): Asset {
  const body = readFileSync(new URL(file, PUBLIC_DIR));
  return { body, type, etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 27)}"` };
}

const dashboardRoutes: FastifyPluginAsync = async (app) => {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const asset = load(file, type);
    app.get(path, { schema: { hide: true }, config: { rateLimit: false } }, async (request, reply) => {
      reply.headers({ etag: asset.etag, 'cache-control': 'no-cache', 'content-security-policy': CSP, 'referrer-policy': 'no-referrer' });
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  }
};

export default routePlugin('mdp-dashboard-routes', dashboardRoutes);
