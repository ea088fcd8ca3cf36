# Lisa runs its TypeScript sources directly on Node.js 22.18 or newer.
#
# Agents and gate commands run in a bubblewrap sandbox (docs/security-model.md), which needs user
# namespaces and a fresh /proc inside the container. Run it with (docs/deployment.md):
#   docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined ...
# (podman: --security-opt unmask=ALL for the last one). `lisa doctor` in the container says what is
# missing; LISA_SANDBOX=off runs agents unsandboxed.
#
# The base is the official Node.js LTS image; an offline build names a local one of the same kind
# (Debian bookworm, node and npm under /usr/local, a user `node`): `npm run image` makes one.
ARG BASE_IMAGE=node:lts-bookworm-slim
FROM ${BASE_IMAGE}

# bubblewrap: the agent sandbox. tini: PID 1, so the processes agents leave behind are reaped.
# The sandbox's own network needs nothing more: its bridge runs on this Node, its proxy in Lisa.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates bubblewrap tini \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# npm at the version whose `npm ci` the test suite runs against the lockfile (test/docker): an image
# built with a stricter npm later must not refuse the lockfile the suite accepted.
ARG NPM_VERSION=11.19.1
COPY package.json package-lock.json ./
# The agent CLIs at the versions the test suite drives (agents/package-lock.json), installed by
# Lisa's postinstall, which npm ci runs: a CLI's output format or flags change between versions,
# and an image built next month must behave as the one tested. Nothing is fetched at run time.
COPY agents/package.json agents/package-lock.json ./agents/
COPY scripts/install-agents.mjs ./scripts/
RUN npm install -g --no-audit --no-fund --no-update-notifier "npm@${NPM_VERSION}" \
  && npm ci --omit=dev --no-audit --no-fund \
  && npm cache clean --force
ENV PATH="/app/agents/node_modules/.bin:${PATH}"
COPY src ./src
COPY prompts ./prompts
COPY app.yml ./
COPY docker/healthcheck.mjs ./docker/
# `lisa doctor`, `lisa status`, … in the container, as in a checkout with `npx lisa`.
RUN ln -s /app/src/cli/lisa.mjs /usr/local/bin/lisa

# Agents refuse to skip permission prompts as root, and should not run as root anyway.
RUN mkdir -p /data && chown node:node /data
USER node
# /metrics and /healthz on an address of their own, not beside the webhook path (EXPOSE publishes
# only the webhooks): scrape it from the container's network, or set LISA_METRICS_ADDRESS.
ENV NODE_ENV=production \
  LISA_DATA_DIR=/data \
  HOST=0.0.0.0 \
  PORT=3000 \
  LISA_METRICS_ADDRESS=0.0.0.0:9464
VOLUME ["/data"]
EXPOSE 3000
# Ready when the worker takes work and the store answers (src/http/operator-endpoints.ts).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["node", "/app/docker/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--disable-warning=ExperimentalWarning", "src/main.ts"]
