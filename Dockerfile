# Lisa runs its TypeScript sources directly on the current Node.js LTS.
#
# Agents and gate commands run in a bubblewrap sandbox (docs/security-model.md), which needs user
# namespaces and a fresh /proc inside the container. Run it with:
#   docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined ...
# Lisa checks at start-up and says what is missing; LISA_SANDBOX=off runs agents unsandboxed.
FROM node:lts-bookworm-slim

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
# Lisa's postinstall: a CLI's output format or flags change between versions, and an image built
# next month must behave as the one tested.
COPY agents/package.json agents/package-lock.json ./agents/
RUN npm install -g --no-audit --no-fund "npm@${NPM_VERSION}" \
  && npm ci --omit=dev --no-audit --no-fund \
  && npm cache clean --force
ENV PATH="/app/agents/node_modules/.bin:${PATH}"
COPY src ./src
COPY prompts ./prompts
COPY app.yml ./

# Agents refuse to skip permission prompts as root, and should not run as root anyway.
RUN mkdir -p /data && chown node:node /data
USER node
ENV NODE_ENV=production \
  LISA_DATA_DIR=/data \
  HOST=0.0.0.0 \
  PORT=3000
VOLUME ["/data"]
EXPOSE 3000
# Ready when the worker takes work and the store answers (src/http/operator-endpoints.ts).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--disable-warning=ExperimentalWarning", "src/main.ts"]
