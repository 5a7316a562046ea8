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
redis_pid=""
cleanup() {
  if [ "$started_neo4j" = 1 ]; then "$referent" neo4j stop || true; fi
  # The Redis this run started, by its pid: another run's on the same port is not ours.
  if [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.1; done
  fi
}
trap cleanup EXIT

# A real Redis for the session-store tests, on a port of its own, no persistence.
if [ -z "${REFERENT_SESSIONS__REDIS_URL:-}" ]; then
  if ! command -v redis-server >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "test: installing redis-server (Debian package)"
      apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
    else
      echo "test: redis-server is missing; install it or set REFERENT_SESSIONS__REDIS_URL" >&2
      exit 1
    fi
  fi
  REDIS_PORT="${REDIS_PORT:-6390}"
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    echo "test: a Redis already answers on port $REDIS_PORT (another test run?);" \
         "set REDIS_PORT to a free port" >&2
    exit 1
  fi
  redis_dir="$REFERENT_DATA_DIR/redis"
  mkdir -p "$redis_dir"
  redis_dir="$(cd "$redis_dir" && pwd)"  # absolute: redis-server changes into --dir
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$redis_dir" --daemonize yes --pidfile "$redis_dir/redis.pid" \
    --logfile "$redis_dir/redis.log"
  for _ in $(seq 50); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  redis_pid="$(cat "$redis_dir/redis.pid")"
  export REFERENT_SESSIONS__REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
fi

# Headless Chromium and its driver for the browser tests (tests/browser), with a CJK font
# so that their screenshots show Chinese. REFERENT_SKIP_BROWSER_TESTS=1 opts out.
if [ "${REFERENT_SKIP_BROWSER_TESTS:-}" != 1 ]; then
  browser_packages=()
  command -v chromium >/dev/null 2>&1 || browser_packages+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || browser_packages+=(chromium-driver)
  required=${#browser_packages[@]}
  fc-list :lang=zh 2>/dev/null | grep -q . || browser_packages+=(fonts-noto-cjk)
  if [ "${#browser_packages[@]}" -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "test: installing ${browser_packages[*]} (Debian packages) for the browser tests"
      apt-get update -qq && apt-get install -y -qq --no-install-recommends \
        "${browser_packages[@]}" >/dev/null
    elif [ "$required" -gt 0 ]; then
      echo "test: the browser tests need the Debian packages ${browser_packages[*]};" \
           "install them, or set REFERENT_SKIP_BROWSER_TESTS=1 to skip those tests" >&2
      exit 1
    else
      echo "test: no Chinese font (Debian fonts-noto-cjk): screenshots will show boxes" >&2
    fi
  fi
fi

if [ -z "${REFERENT_NEO4J__URI:-}" ] && ! "$referent" neo4j status >/dev/null 2>&1; then
  "$referent" neo4j start
  started_neo4j=1
fi

.venv/bin/python -m pytest "$@"
