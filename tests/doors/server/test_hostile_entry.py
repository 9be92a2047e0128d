"""No input reaches a 500 at the HTTP entry: schemathesis draws a request for every operation of
the published OpenAPI document, then hypothesis plants hostile text where requests enter (a path
parameter, a query value or name, a header) as raw bytes on the wire: invalid UTF-8, encoded
surrogates and NUL, overlong encodings, deep JSON nesting, huge numbers, very long text, path
tricks. A real server on loopback answers every one with a status below 500.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("schemathesis")

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _serving import serving
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.doors.server.throttle import AuthThrottle
from memstack.engines import Engine

EXAMPLES = int(os.environ.get("MEMSTACK_HOSTILE_EXAMPLES", "5"))

# Raw, already percent-encoded forms for paths and queries (what an attacker puts on the wire).
_ENCODED = st.sampled_from(
    [
        "%FF", "a%FEb", "%C3", "%C3%28", "%E2%82", "%F0%9F%98", "%ED%A0%80", "%ED%BF%BF", "%C0%AF",
        "%C0%80", "%00", "a%00b", "%F4%90%80%80", "%F8%88%80%80%80", "%EF%BF%BD", "%EF%BB%BF",
        "%2E%2E", "..", "%2F", "%5C", "%0A", "%0D%0A", "%7F", "%25", "%25FF", "%", "%G0", "%F0%9F%98%80",
    ]
)  # fmt: skip
_DEEP = st.integers(101, 3_000).flatmap(
    lambda n: st.sampled_from(["%5B" * n + "%5D" * n, "%7B%22a%22%3A" * n + "1" + "%7D" * n, "%5B" * n])
)
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30).map(
    lambda s: quote(s, safe="")
)
_LONG = st.integers(1_000, 20_000).map(lambda n: "x" * n)
_NUMBERS = st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "9" * 5000, "-0", "0x10", "1_000", "%201"])
# Cut to what a client sends at all (httpx refuses URLs past 64 KiB): a cut escape is hostile too.
HOSTILE_ENCODED = st.lists(st.one_of(_ENCODED, _DEEP, _TEXT, _LONG, _NUMBERS), min_size=1, max_size=3).map(
    lambda parts: "".join(parts)[:12_000]
)
# Header values go out as raw bytes (no percent-encoding in headers).


def _legal(value: bytes) -> bytes:
    """Bytes an HTTP client can send as a header value (no controls, no edge whitespace)."""
    return bytes(c for c in value if c >= 0x20 and c != 0x7F).strip(b" ") or b"\xff"


HOSTILE_HEADER = st.one_of(
    st.binary(min_size=1, max_size=40).map(_legal),
    st.sampled_from([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"caf\xc3\xa9", b"Bearer \x80\x81", b"[" * 3000]),
    st.integers(101, 3_000).map(lambda n: b"[" * n + b"]" * n),
)
HEADERS = ["Authorization", "X-Memstack-Tenant", "Content-Type", "Accept", "X-Forwarded-For", "Cookie"]


@pytest.fixture(params=["memory", "memory-keys", "sqlite", "redis"])
def target(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[str, dict[str, str], Any]]:
    from conftest import engine_url
    from memstack.engines import open_engine

    kind = request.param.removesuffix("-keys")
    urls = request.getfixturevalue("redis_urls") if kind == "redis" else None
    engine: Engine = open_engine(engine_url(kind, tmp_path, urls))
    if kind == "redis":
        engine.flush()
    headers: dict[str, str] = {}
    if request.param.endswith("-keys"):
        _, token = ApiKeyStore(engine).create(["acme"])
        headers["Authorization"] = f"Bearer {token}"
    # A generous throttle: hostile Authorization headers should meet the key check, not a 429.
    settings = ServerSettings(
        max_wait_seconds=0.05,
        auth="keys" if headers else "none",
        auth_throttle=AuthThrottle(burst=10**6, per_minute=10**6),
    )
    app = create_app(engine, settings)
    try:
        with serving(app) as base:
            yield base, headers, schemathesis.openapi.from_url(f"{base}/openapi.json")
    finally:
        engine.close()


def _query(values: dict[str, Any]) -> list[tuple[str, str]]:
    pairs = []
    for name, value in values.items():
        for item in value if isinstance(value, list) else [value]:
            text = json.dumps(item) if isinstance(item, dict | bool) or item is None else str(item)
            pairs.append((quote(name, safe=""), quote(text, safe="")))
    return pairs


def test_hostile_text_at_the_entry_never_reaches_a_500(target: tuple[str, dict[str, str], Any]) -> None:
    base, auth, schema = target
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20
    seen: Counter[int] = Counter()
    with httpx.Client(base_url=base, timeout=30, headers=auth) as client:
        for operation in operations:

            @given(case=operation.as_strategy(), data=st.data())
            @settings(
                max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
            )
            def call(case: schemathesis.Case, data: st.DataObject) -> None:
                params = {k: quote(str(v), safe="") for k, v in (case.path_parameters or {}).items()}
                query = _query(dict(case.query or {}))
                headers: dict[str, Any] = {
                    k: _legal(str(v).encode()) for k, v in (case.headers or {}).items()
                }
                where = data.draw(
                    st.sampled_from(["path", "query value", "query name", "header", "everywhere"])
                )
                if where in ("path", "everywhere") and params:
                    params[data.draw(st.sampled_from(sorted(params)))] = data.draw(HOSTILE_ENCODED)
                if where in ("query value", "everywhere"):
                    name = data.draw(st.sampled_from([n for n, _ in query] or ["metadata"]))
                    query.append((name, data.draw(HOSTILE_ENCODED)))
                if where == "query name":
                    query.append((data.draw(HOSTILE_ENCODED), "1"))
                if where in ("header", "everywhere"):
                    headers[data.draw(st.sampled_from(HEADERS))] = data.draw(HOSTILE_HEADER)
                path = re.sub(r"\{(\w+)\}", lambda m: params.get(m.group(1), "x"), case.path)
                raw_query = "&".join(f"{n}={v}" for n, v in query)
                url = httpx.URL(base + path + ("?" + raw_query if raw_query else ""))
                body = case.body if isinstance(case.body, dict | list) else None
                # Streamed: an accepted watch (server-sent events) never ends, so its body is not read.
                with client.stream(case.method, url, json=body, headers=headers) as response:
                    if not response.headers.get("content-type", "").startswith("text/event-stream"):
                        response.read()
                seen[response.status_code] += 1
                described = f"{case.method} {str(url)[:300]} {str(headers)[:200]}"
                assert response.status_code < 500, (described, response.text[:300])
                if response.status_code == 400 and response.json().get("error") == "InvalidInput":
                    assert response.json()["detail"].startswith(("path", "query", "header")), described

            call()
    assert seen[400] > 0 and sum(seen.values()) >= len(operations) * EXAMPLES // 2, seen
