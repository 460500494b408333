#!/bin/sh
# Picks the tier of the one Hearth image. Runs node directly (not through npm) so SIGTERM reaches
# the process and its graceful shutdown; the paths and node flags are those of the package.json scripts.
set -e
role="${1:-api}"
if [ "$#" -gt 0 ]; then shift; fi
case "$role" in
  api)        echo api > /tmp/hearth-role;    exec node --no-memory-reducer dist/apps/api/apps/api/src/main.js "$@" ;;  # npm run start:api
  worker)     echo worker > /tmp/hearth-role; exec node dist/apps/worker/apps/worker/src/main.js "$@" ;;  # npm run start:worker
  migrate)    echo migrate > /tmp/hearth-role; exec node dist/apps/api/apps/api/src/migrate.js "$@" ;;   # npm run db:migrate
  ping)       exec node dist/apps/worker/apps/worker/src/ping.js "$@" ;;  # is a worker answering?
  all-in-one) echo api > /tmp/hearth-role;    exec node --no-memory-reducer dist/apps/api/apps/api/src/main.js --all-in-one "$@" ;;  # npm start
  *)          exec "$role" "$@" ;;
esac
