"""A hostile-input fuzz over HTTP: schemathesis generates a valid request for every operation of
the published OpenAPI document, then hypothesis plants a hostile value somewhere in its JSON body
(a lone surrogate, a huge or non-finite number, deep nesting, a surrogate object key). On every
engine: no response is a 5xx, every hostile body is refused (400 naming the body, or the
schema's 422), and the engines answer alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("schemathesis")

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _serving import serving
from memstack.doors.server import ServerSettings, create_app
from memstack.engines import Engine

MARK = "__hostile__"
EXAMPLES = 20

_surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_text_with_surrogate = st.tuples(st.text(max_size=5), _surrogate, st.text(max_size=5)).map("".join)

# Each strategy draws the raw JSON text of one hostile value.
HOSTILE = st.one_of(
    _text_with_surrogate.map(json.dumps),  # json.dumps writes a lone surrogate as a \\udXXX escape
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "[1e309]"]),
    st.integers(4001, 9000).map(lambda n: "9" * n),
    st.integers(103, 30_000).map(lambda n: "[" * n + "]" * n),
    st.integers(103, 5_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    _text_with_surrogate.map(lambda key: "{" + json.dumps(key) + ": 1}"),
    st.tuples(st.floats(allow_nan=False, allow_infinity=False), _text_with_surrogate).map(
        lambda pair: json.dumps({"n": pair[0], "s": pair[1]})
    ),
)


def _locations(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _locations(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _locations(inner, (*path, index))


def _plant(body: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return MARK
    head, *rest = path
    copy: Any = dict(body) if isinstance(body, dict) else list(body)
    copy[head] = _plant(copy[head], tuple(rest))
    return copy


@pytest.fixture(params=["memory", "sqlite", "redis"])
def fuzz_target(
    request: pytest.FixtureRequest, tmp_path: Any
) -> Iterator[tuple[str, schemathesis.BaseSchema]]:
    from conftest import engine_url
    from memstack.engines import open_engine

    urls = request.getfixturevalue("redis_urls") if request.param == "redis" else None
    engine: Engine = open_engine(engine_url(request.param, tmp_path, urls))
    if request.param == "redis":
        engine.flush()
    app = create_app(engine, ServerSettings(max_wait_seconds=0.05))
    try:
        with serving(app) as base:
            yield base, schemathesis.openapi.from_url(f"{base}/openapi.json")
    finally:
        engine.close()


def test_hostile_bodies_never_reach_a_500(fuzz_target: tuple[str, schemathesis.BaseSchema]) -> None:
    base, schema = fuzz_target
    operations = [result.ok() for result in schema.get_all_operations()]
    with_bodies = [op for op in operations if op.body]
    assert len(with_bodies) >= 10
    seen: dict[int, int] = {}
    with httpx.Client(base_url=base, timeout=30) as client:
        for operation in with_bodies:

            @given(case=operation.as_strategy(), data=st.data())
            @settings(
                max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
            )
            def call(case: schemathesis.Case, data: st.DataObject) -> None:
                body = case.body if isinstance(case.body, dict | list) else {}
                where = data.draw(st.sampled_from(list(_locations(body))))
                raw = json.dumps(_plant(body, where)).replace(json.dumps(MARK), data.draw(HOSTILE), 1)
                response = client.request(
                    case.method,
                    case.formatted_path,
                    params=case.query,
                    content=raw,
                    headers={"content-type": "application/json"},
                )
                seen[response.status_code] = seen.get(response.status_code, 0) + 1
                described = f"{case.method} {case.formatted_path} {raw[:200]!r}"
                assert response.status_code < 500, (described, response.text[:300])
                assert response.status_code in (400, 422), (
                    described,
                    response.status_code,
                    response.text[:300],
                )
                problem = response.json()
                if response.status_code == 400:
                    # The body's value check, or the entry check of the generated path and query
                    # (a NUL character there is refused before the body is read).
                    detail, error = problem["detail"], problem["error"]
                    entry = error == "InvalidInput" and detail.startswith(("query", "path"))
                    body = error == "InvalidValue" and detail.startswith("body")
                    assert body or entry, (described, problem)

            call()
    assert seen.get(400, 0) > 0
