# Interchange: one instance of the service. It runs its TypeScript directly (Node's type stripping),
# so there is no build step; the image's own Node 24 runs it (the `node` devDependency that pins
# Node for development is left out with the other dev dependencies).
FROM node:24-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so that a code change does not reinstall them. No production dependency has
# an install script (the lockfile says so), hence --ignore-scripts.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# The code stays owned by root (read-only for the service); only ./data, where the embedded
# SQLite database and its generated master.key go when DATABASE_URL is unset, is the service's.
COPY bin ./bin
COPY src ./src
RUN mkdir data && chown node:node data

USER node
ENV HOST=0.0.0.0 \
    PORT=8080
EXPOSE 8080

# /readyz: 200 once the server takes work (storage migrated and reachable, Redis too when set),
# 503 while storage is away or the instance is shutting down (docs/operations.md).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Exactly `npm start`'s command, its Node flags included (test/system/start-flags.test.ts holds them the
# same). Exec form: node is PID 1 and receives SIGTERM itself; the server handles it (in-flight
# requests finish, usage counts are flushed) and exits 0.
CMD ["node", "--max-semi-space-size=8", "bin/interchange.js", "serve"]
