# syntax=docker/dockerfile:1
# One image, two tiers: `CMD ["api"]` (default), `["worker"]`, `["migrate"]`, `["all-in-one"]` or `["ping"]`
# (see docker/entrypoint.sh). Node 24 LTS, as the repository's `node` devDependency pins it.

# --- deps: every dependency, for the build. `npm install`, not `npm ci`: the lockfile made on
# Linux lists only the linux-x64 variants of optional native packages (reference/toolchain.md).
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund

# --- build: compile both apps (`nest build` resolves the @hearth/* path aliases).
FROM deps AS build
COPY tsconfig.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY db ./db
RUN npm run build

# --- prod-deps: runtime dependencies only.
FROM node:24-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime: non-root, production dependencies and the compiled output only.
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    HEARTH_DATA_DIR=/app/data
WORKDIR /app
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY package.json ./
COPY docker/entrypoint.sh /usr/local/bin/hearth-entrypoint
COPY docker/healthcheck.js /usr/local/lib/hearth-healthcheck.js
RUN chmod 0755 /usr/local/bin/hearth-entrypoint \
 && mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# The API answers /health; a worker (no HTTP) passes while its process runs (see healthcheck.js).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/usr/local/lib/hearth-healthcheck.js"]
ENTRYPOINT ["hearth-entrypoint"]
CMD ["api"]
