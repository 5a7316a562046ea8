#!/usr/bin/env bash
# The demo command: set up, start Neo4j, load the demo knowledge base, play conversations.
# Extra arguments go to `referent demo` (e.g. --session demo-02).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/referent demo "$@"
