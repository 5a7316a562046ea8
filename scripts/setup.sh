#!/usr/bin/env bash
# Create .venv and install Referent with its test tools. Idempotent; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' is missing: $2" >&2; exit 1; }; }
need python3 "install Python 3.11 or newer"
python3 - <<'PY' || { echo "setup: Python 3.11 or newer is required" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY
# The local Neo4j is built with Maven and runs on Java 17+.
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: installing Java 17 and Maven (Debian packages)"
    apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null
  else
    echo "setup: Java 17+ and Maven are needed for the local Neo4j (or set REFERENT_NEO4J__URI)" >&2
    exit 1
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.referent-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ clients/python/pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing Python dependencies into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip
  # The server, and the client distribution with its integrations (clients/python).
  .venv/bin/python -m pip install --quiet -e ".[test,local-embed,bench,fit]" \
    -e "./clients/python[langchain,llamaindex,mcp]"
  touch "$stamp"
fi
