# syntax=docker/dockerfile:1
# The service as a container: compile in a build stage, run dist/ on a slim Node 24 image as a non-root
# user. `npm run test:production` builds this image and runs it (scripts/container-image.mjs).

# Build: every dependency, then src/ -> dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# What dist/ runs and nothing else: no compiler, no test tools, no tsx (an optional dependency, only for
# `npm start` on a source checkout), no lifecycle scripts, no npm cache.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
# Metrics listen on every interface of the container for a scraper on the same network; publish only
# PORT (docker run -p 3000:3000), never METRICS_PORT.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    STATE_DIR=/var/lib/market-data-proxy
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY public ./public
# The embedded store (budget ledger, last good values) must outlive the container when there is no Redis.
RUN mkdir -p "$STATE_DIR" && chown node:node "$STATE_DIR"
VOLUME ["/var/lib/market-data-proxy"]
USER node
EXPOSE 3000 9464
# Liveness only (the process answers); readiness, which checks the store, is /api/system/ready.
# The slim image has no curl: Node's own fetch asks.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/system/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1's only process and receives SIGTERM itself (docker stop), then drains.
CMD ["node", "dist/server.js"]
