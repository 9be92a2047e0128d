"""Every long-term scope holding entries is listed, on every engine: sorted, only non-empty scopes,
each tenant's own, the injection trackers never taken for scopes."""

from __future__ import annotations

from memstack import Memory
from memstack.engines.prefixed import tenant_engine
from memstack.tiers.longterm import list_scopes


def test_scopes_with_entries_are_listed_sorted(mem: Memory) -> None:
    assert list_scopes(mem.engine) == []
    for scope in ("zoe", "alice", "a.b@c-d_e"):
        mem.long_term(scope).save(content=f"{scope} likes tea")
    mem.long_term("alice").save(content="Alice plays the violin")
    assert list_scopes(mem.engine) == ["a.b@c-d_e", "alice", "zoe"]


def test_an_emptied_scope_is_not_listed(mem: Memory) -> None:
    saved = mem.long_term("gone").save(content="soon deleted")
    mem.long_term("kept").save(content="stays")
    mem.long_term("gone").delete(saved.id)
    assert list_scopes(mem.engine) == ["kept"]


def test_injection_trackers_are_not_scopes(mem: Memory) -> None:
    from memstack import ContextBuilder

    mem.long_term("alice").save(content="Alice plays the violin")
    ContextBuilder(mem, scope="alice").build("s1", "violin?")  # marks the recalled entry injected
    assert list_scopes(mem.engine) == ["alice"]


def test_each_tenant_lists_its_own(mem: Memory) -> None:
    acme, beta = Memory(tenant_engine(mem.engine, "acme")), Memory(tenant_engine(mem.engine, "beta"))
    acme.long_term("alice").save(content="acme's")
    beta.long_term("bob").save(content="beta's")
    assert list_scopes(acme.engine) == ["alice"]
    assert list_scopes(beta.engine) == ["bob"]
    assert list_scopes(mem.engine) == []
