#!/usr/bin/env bash
# The test command: set up, start the services the tests need, run pytest, stop them.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/unit -x).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

# Tests keep their data apart from the demo's and use a port of their own.
export REFERENT_DATA_DIR="${REFERENT_DATA_DIR:-var/test}"
export REFERENT_NEO4J__LOCAL_PORT="${REFERENT_NEO4J__LOCAL_PORT:-7697}"
referent=.venv/bin/referent

started_neo4j=0
cleanup() {
  if [ "$started_neo4j" = 1 ]; then "$referent" neo4j stop || true; fi
}
trap cleanup EXIT

if [ -z "${REFERENT_NEO4J__URI:-}" ] && ! "$referent" neo4j status >/dev/null 2>&1; then
  "$referent" neo4j start
  started_neo4j=1
fi

.venv/bin/python -m pytest "$@"
