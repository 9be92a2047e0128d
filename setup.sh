#!/usr/bin/env bash
# One-command set-up on a fresh machine: a .venv with memstack, its optional extras and the test
# tools, plus Debian's redis-server (the Redis tests start real servers). Idempotent.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "setup.sh: redis-server not found; Redis tests will be skipped (apt-get install redis-server)" >&2
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[tokens,embeddings,server,langgraph,llamaindex,dev]'
