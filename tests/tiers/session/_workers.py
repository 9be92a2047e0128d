"""Process entry points for the multi-process tests (importable by spawned children)."""

from __future__ import annotations

from memstack.engines import open_engine
from memstack.tiers.session import SessionStore


def increment_many(url: str, session_id: str, key: str, times: int) -> None:
    engine = open_engine(url)
    try:
        store = SessionStore(engine)
        for _ in range(times):
            store.increment(session_id, key)
    finally:
        engine.close()
