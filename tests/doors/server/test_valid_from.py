"""One name, one value: ``valid_from`` read in Python equals ``valid_from`` in the HTTP JSON, for an
entry saved with and without a start of validity."""

from __future__ import annotations

from fastapi.testclient import TestClient

from memstack import Memory
from memstack.engines import Engine
from memstack.engines.prefixed import DEFAULT_TENANT, tenant_engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.timefmt import iso_utc


def test_python_and_http_agree_on_valid_from(engine: Engine, client: TestClient, clock: ManualClock) -> None:
    mem = Memory(tenant_engine(engine, DEFAULT_TENANT))  # the tenant the keyless server answers for
    notes = mem.long_term("ana")
    plain = notes.save(content="Ana likes tea")
    dated = notes.save(content="Ana lives in Berlin", valid_from=clock.now() - 3600)
    by_http = client.post("/v1/memories", params={"scope": "ana"}, json={"content": "Ana has a dog"}).json()
    for entry in (plain, dated):
        wire = client.get(f"/v1/memories/{entry.id}", params={"scope": "ana"}).json()
        assert wire["valid_from"] == iso_utc(entry.valid_from)
        assert wire["created_at"] == iso_utc(entry.created_at)
    assert iso_utc(plain.valid_from) == iso_utc(plain.created_at)
    assert iso_utc(dated.valid_from) != iso_utc(dated.created_at)
    read = notes.get(by_http["id"])
    assert read is not None and iso_utc(read.valid_from) == by_http["valid_from"] == by_http["created_at"]
