"""The keyspace registry: one table of families, read both ways (a key is built from a family and
classified back to it), on plain and on clustered engines; the tiers' layouts are its keys."""

from __future__ import annotations

import pytest

from memstack.engines import Engine
from memstack.foundation.keyspace import (
    FAMILIES,
    KINDS,
    ROLES,
    RULES,
    family_named,
    family_of,
    no_tag,
    split_tenant,
    tenant_prefix,
    window_scope,
    window_session,
)
from memstack.foundation.keyspace.families import KEY_PREFIXES
from memstack.foundation.keyspace.pattern import Pattern, hash_tag
from memstack.services.lifecycle import TIERS
from memstack.tiers.longterm.layout import ScopeKeys, injected_key
from memstack.tiers.session.layout import SESSIONS_KEY, Layout


def cluster_tag(value: str) -> str:
    return "{" + value + "}"


EXAMPLE_PARTS = {
    "session": "s-1",
    "conversation": "c_1",
    "scope": "alice@example.com",
    "board": "network.pipeline",
    "subject": "u:42+x",
    "namespace": "session/s-1",
    "top": "session",
    "turn_session": "a/b:c",
    "code": '["a","b"]',
    "window": "wf__a__b",
    "node_window": "wf__n_1__x.y@z",
    "batch": "0123456789abcdef",
    "batch_row": "6944404665886468999",
    "event": "12",
    "key_id": "0123456789ab",
    "minute": "29136420",
}


def example(family_name: str, tag: object = no_tag) -> str:
    family = family_named(family_name)
    values = {name: EXAMPLE_PARTS.get(name, f"{name}-x") for name in family.pattern.names}
    return family.key(tag, **values)  # type: ignore[arg-type]


def test_every_family_is_well_formed_and_named_once() -> None:
    names = [f.name for f in FAMILIES]
    assert len(names) == len(set(names))
    for family in FAMILIES:
        assert family.kind in KINDS and family.role in ROLES and family.rule in RULES
        assert family.owner in TIERS, family.name  # a forget report counts every owner


@pytest.mark.parametrize("tag", [no_tag, cluster_tag], ids=["plain", "clustered"])
@pytest.mark.parametrize("name", [f.name for f in FAMILIES])
def test_every_key_classifies_back_to_its_family(name: str, tag: object) -> None:
    key = example(name, tag)
    tenant, found = family_of(key)
    assert tenant is None and found is not None, key
    assert found[0].name == name, (key, found[0].name)
    family = family_named(name)
    for part in family.pattern.names:
        assert found[1][part] == EXAMPLE_PARTS.get(part, f"{part}-x")
    prefixed = family_of(tenant_prefix("acme") + key)
    assert prefixed[0] == "acme" and prefixed[1] is not None and prefixed[1][0].name == name


def test_keys_no_family_declares_are_not_classified() -> None:
    for key in ("k", "lt:a:b:c", "rr:memory", "shared:x:b:k:1", "win:nosession:buf", "ms:batch:xyz"):
        assert family_of(key)[1] is None, key


def test_a_scope_part_is_one_hash_tag_on_a_cluster() -> None:
    key = example("long_term.entry", cluster_tag)
    assert hash_tag(key) == "alice@example.com"
    assert hash_tag(example("working.namespaces", cluster_tag)) == "wm"
    assert hash_tag(example("turns.session", cluster_tag)) == "turns"  # the tier's one slot


def test_the_tiers_build_their_keys_from_the_registry(engine: Engine) -> None:
    layout = Layout(engine.tag("s-1"))
    built = {
        "session.keys": layout.keys,
        "session.history": layout.history,
        "session.meta": layout.meta,
        "session.generation": layout.generation,
        "session.value": layout.data("name"),
        "session.registry": SESSIONS_KEY,
        "long_term.entry": ScopeKeys.of(engine, "alice").entry("e1"),
        "long_term.snapshot": ScopeKeys.of(engine, "alice").snapshot,
        "long_term.deletions": ScopeKeys.of(engine, "alice").deletions,
        "long_term.injected": injected_key(engine, "s-1"),
    }
    for name, key in built.items():
        found = family_of(key)[1]
        assert found is not None and found[0].name == name, key


def test_patterns_render_prefixes_and_parse() -> None:
    pattern = Pattern("lt:<scope>:e:{id}")
    assert pattern.render(cluster_tag, scope="s", id="x") == "lt:{s}:e:x"
    assert pattern.prefix(no_tag, scope="s") == "lt:s:e:"
    assert pattern.lead == "lt:" and pattern.scope == "scope"
    assert pattern.match("lt:{s}:e:x:y") == {"scope": "s", "id": "x:y"}
    assert pattern.match("lt:s:e:") is None


def test_the_window_rule_reads_any_legal_session_back() -> None:
    for session in ("a__b", "b", "__b", "x.y@z:1", "a_b"):
        assert window_session(window_scope("wf", session), node=False) == session
        assert window_session(window_scope("w_f", session, "n_1"), node=True) == session
    assert window_session("wf", node=False) is None
    assert window_session("wf__n", node=True) is None


def test_tenants() -> None:
    assert split_tenant("t:acme:lt:a:ids") == ("acme", "lt:a:ids")
    assert split_tenant("lt:a:ids") == (None, "lt:a:ids")
    assert split_tenant("t:bad name:x") == (None, "t:bad name:x")


def test_key_prefixes_mark_every_familys_keys() -> None:
    for family in FAMILIES:
        key = example(family.name)
        assert any(key.startswith(prefix) for prefix in KEY_PREFIXES), key
