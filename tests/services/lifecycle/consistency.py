"""The consistency scan the forget tests share: no half-objects anywhere on an engine.

A half-object is a reference without its target: a long-term id (or vector) without its entry, an
entry outside its scope's id set, a session key-set member without its value, a conversation whose
message index points past its log.
"""

from __future__ import annotations

import re

from memstack.engines import Engine
from memstack.tiers.longterm.backfill import stored_scopes
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.session.layout import PREFIX as SESSION_PREFIX

_CONVERSATION = re.compile(r"^conv:(\{?[^:]+\}?):n$")


def consistency_problems(engine: Engine) -> list[str]:
    """Every half-object on ``engine`` (untenanted keys), as readable lines; [] when consistent."""
    problems: list[str] = []
    for _, scope in stored_scopes(engine):
        keys = ScopeKeys.of(engine, scope)
        ids = engine.smembers(keys.ids)
        entries = {k[len(keys.entry_prefix) :] for k in engine.scan(keys.entry_prefix)}
        problems += [f"scope {scope}: id {i} without its entry" for i in sorted(ids - entries)]
        problems += [f"scope {scope}: entry {i} outside the id set" for i in sorted(entries - ids)]
        problems += [
            f"scope {scope}: vector {i} without its entry"
            for i in sorted(set(engine.hkeys(keys.vectors)) - ids)
        ]
    for keys_key in engine.scan(SESSION_PREFIX):
        if keys_key.endswith(":__keys__"):
            base = keys_key[: -len("__keys__")]
            problems += [
                f"session {base}: key {k} without its value"
                for k in sorted(engine.smembers(keys_key))
                if not engine.exists(base + k)
            ]
    for key in engine.scan("conv:"):
        match = _CONVERSATION.match(key)
        if match is not None:
            count, length = int(engine.get(key) or 0), engine.llen(f"conv:{match.group(1)}:log")
            if count != length:
                problems.append(f"conversation {match.group(1)}: {count} messages counted, {length} logged")
    return problems
