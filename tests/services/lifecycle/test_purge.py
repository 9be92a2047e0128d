"""Tenant purge on every engine: two tenants with data in every tier; purging one leaves no key of
it and no API key for it, and the other tenant is byte-identical. Over HTTP only an admin key may."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import memstack
from memstack import Memory
from memstack.doors.cli import app as cli_app
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.doors.server.rates import KeyRates
from memstack.engines import Engine
from memstack.engines.base import SCAN_PAGE
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidInput
from memstack.foundation.keyspace import family_named
from memstack.services.lifecycle.purge import purge_tenant
from memstack.services.transfer.dump import dump_lines

from .test_forget import fill_board, fill_conversation, fill_namespace, fill_scope, fill_session


def fill(mem: Memory, marker: str) -> None:
    for fill in (fill_session, fill_scope, fill_conversation, fill_namespace, fill_board):
        fill(mem, marker)


def raw(engine: Engine, prefix: str) -> list[tuple[str, str]]:
    return sorted((line["key"], repr(line["value"])) for line in dump_lines(engine, prefix))


def test_purge_removes_one_tenant_and_its_keys(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    _, gone_token = store.create(["gone"])
    store.create(["gone", "kept"])  # may act for the purged tenant too: revoked as well
    _, kept_token = store.create(["kept"])
    fill(Memory(tenant_engine(engine, "gone")), "g0ne")
    fill(Memory(tenant_engine(engine, "kept")), "k3pt")
    kept_before = raw(engine, "t:kept:")
    report = purge_tenant(engine, "gone", api_keys=store)
    assert report.remaining == 0 and report.selector == {"tenant": "gone"}
    assert report.deleted["api_keys"] == 2 and report.deleted["long_term"] > 0
    assert report.deleted["sessions"] > 0 and report.deleted["turn_log"] > 0
    assert raw(engine, "t:gone:") == []
    assert raw(engine, "t:kept:") == kept_before
    assert store.verify(gone_token) is None and store.verify(kept_token) is not None
    assert purge_tenant(engine, "gone", api_keys=store).total == 0


def test_purge_drops_the_rate_counters_of_the_keys_it_revokes(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    gone, _ = store.create(["gone"], rate=100)
    kept, _ = store.create(["kept"], rate=100)
    rates = KeyRates(engine)
    for key in (gone, kept, gone):
        assert rates.take(key.key_id, 100) == 0
    counters = family_named("auth.rate")
    assert {counters.match(k)["key_id"] for k in engine.scan("auth:rate:")} == {gone.key_id, kept.key_id}  # type: ignore[index]  # every counter is one of the family's keys
    report = purge_tenant(engine, "gone", api_keys=store)
    assert report.deleted["api_keys"] == 2 and report.remaining == 0  # the key and its one counter
    left = list(engine.scan("auth:rate:"))
    assert [counters.match(k)["key_id"] for k in left] == [kept.key_id]  # type: ignore[index]  # as above
    assert engine.get(left[0]) == "1"


def test_bad_tenant_names_are_refused(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="tenant"):
        purge_tenant(engine, "../x")


def test_only_an_admin_key_purges_over_http(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    _, admin = store.create(["ops"], admin=True)
    _, user = store.create(["acme"])
    Memory(tenant_engine(engine, "acme")).long_term().save(content="acme fact")
    with TestClient(create_app(engine, ServerSettings(require_auth=True))) as client:
        refused = client.post("/v1/admin/tenants/acme/purge", headers={"Authorization": f"Bearer {user}"})
        assert refused.status_code == 403
        assert raw(engine, "t:acme:") != []
        done = client.post("/v1/admin/tenants/acme/purge", headers={"Authorization": f"Bearer {admin}"})
        assert done.status_code == 200, done.text
        assert done.json()["remaining"] == 0 and done.json()["deleted"]["api_keys"] == 1
        assert client.get("/v1/memories", headers={"Authorization": f"Bearer {user}"}).status_code == 401
    assert raw(engine, "t:acme:") == []


def test_cli_purge_asks_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'purge.db'}"
    with memstack.open(url, tenant=None) as whole:
        Memory(tenant_engine(whole.engine, "acme")).long_term().save(content="acme fact")
    runner = CliRunner()
    declined = runner.invoke(cli_app, ["--url", url, "tenants", "purge", "acme"], input="n\n")
    assert declined.exit_code == 1
    with memstack.open(url, tenant=None) as whole:
        assert raw(whole.engine, "t:acme:") != []
    done = runner.invoke(cli_app, ["--url", url, "tenants", "purge", "acme", "--yes"])
    assert done.exit_code == 0 and "purged tenant acme" in done.stdout and "0 remaining" in done.stdout
    with memstack.open(url, tenant=None) as whole:
        assert raw(whole.engine, "t:acme:") == []


def test_purge_deletes_a_tenant_larger_than_a_scan_page(engine: Engine) -> None:
    """The purge reads and deletes one page at a time: every key of a tenant holding more than two
    pages goes, counted once, and the other tenant keeps its own."""
    gone, kept = tenant_engine(engine, "gone"), tenant_engine(engine, "kept")
    total = 2 * SCAN_PAGE + 7
    value = family_named("session.value")
    for view in (gone, kept):
        # Session values of one session: one hash slot on a cluster, so one batch on every engine.
        with view.batch() as batch:
            for n in range(total):
                batch.set(value.key(view.tag, session="big", key=f"k{n}"), '"v"')
    report = purge_tenant(engine, "gone")
    assert report.remaining == 0 and report.deleted["sessions"] == total
    assert sum(1 for _ in gone.scan("")) == 0
    assert sum(1 for _ in kept.scan("")) == total
