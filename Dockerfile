# Build with the dev dependencies, run with the production ones only.
# The base image: override it (`--build-arg NODE_IMAGE=…`) to build from a mirror or registry of your own.
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# Behind a TLS-intercepting proxy, npm trusts the proxy's CA bundle given as the optional build secret `npm-ca`
# (docs/operating.md, "Building behind a TLS-intercepting proxy"); an ordinary build needs nothing.
RUN --mount=type=secret,id=npm-ca,required=false \
    --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/npm-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; fi \
    && npm ci --no-audit --no-fund

FROM dependencies AS build
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
# The service alone: the development tools (dev/) are neither copied nor built. Source maps and the
# incremental-build state serve development only. Without dev/, the commands' scripts (`npm run apikey`,
# `npm run migration:*`) run the production entries of the same name, which need DATABASE_URL, instead of the
# development ones that start an embedded PostgreSQL.
RUN npm run build:service && find dist \( -name '*.map' -o -name '.tsbuildinfo*' \) -delete \
    && sed -i 's#dist/dev/\(apikey\|migrations\)\.js#dist/src/cli/\1.js#' package.json

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# Dev dependencies (the embedded PostgreSQL among them) are left out, and so are optional dependencies: packages
# only dev dependencies need (which `npm ls --omit=dev` would call extraneous).
RUN --mount=type=secret,id=npm-ca,required=false \
    --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/npm-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; fi \
    && npm ci --omit=dev --omit=optional --no-audit --no-fund \
    && find node_modules -name '*.map' -delete

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The files above stay owned by root: the service cannot rewrite its own code.
USER node
EXPOSE 3000
# node:24-slim has no curl: bash's /dev/tcp asks for readiness (database reachable, migrations applied) and reads the
# status line, with no process but the shell (a Node probe started a runtime every 5 s; docs/operating.md, "The image").
HEALTHCHECK --interval=5s --timeout=10s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'GET /health/ready HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]
# `npm run start:prod`'s command, its V8 flags included (package.json holds them; docs/performance.md).
CMD ["node", "--heap-growing-percent=50", "--no-allocation-site-pretenuring", "--import", "./dist/src/observability/tracing/preload.js", "dist/src/main.js"]
