"""``/metrics``, ``/healthz``/``/readyz`` and the offline API docs, on every engine."""

from __future__ import annotations

import http
import random
import re
import string
import threading

import pytest
from fastapi.testclient import TestClient

from memstack.doors.server import create_app
from memstack.doors.server.access_log import METHODS
from memstack.doors.server.metrics import TOKEN_ENV
from memstack.doors.server.problems import TITLES
from memstack.engines import Engine
from memstack.foundation.errors import MemstackError
from memstack.index import registry

FAMILIES = [
    "memstack_http_requests_total",
    "memstack_http_request_duration_seconds_bucket",
    "memstack_engine_batch_duration_seconds_bucket",
    "memstack_errors_total",
    "memstack_index_size",
    "memstack_open_waits",
    "memstack_subscriptions",
]


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of the one sample of ``name`` whose labels include ``labels``."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.partition(" ")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no sample {name} {labels} in:\n{text}")


def test_metrics_count_requests_by_route_template(client: TestClient, engine: Engine) -> None:
    client.post("/v1/sessions", json={"session_id": "secret-session"})
    client.put("/v1/sessions/secret-session/keys/k", json={"value": 1})
    client.get("/v1/sessions/nope")
    client.post("/v1/memories?scope=u1", json={"content": "likes green tea"})
    client.get("/v1/memories?scope=u1&query=tea")
    text = client.get("/metrics").text
    for family in FAMILIES:
        assert family in text, family
    route = "/v1/sessions/{session_id}/keys/{key}"
    assert _sample(text, "memstack_http_requests_total", route=route, method="PUT", status="200") == 1
    assert _sample(text, "memstack_http_requests_total", route="/v1/sessions/{session_id}", status="404") == 1
    assert _sample(text, "memstack_errors_total", type="SessionNotFound") == 1
    assert _sample(text, "memstack_engine_batch_duration_seconds_count", engine=engine.name, outcome="ok") > 0
    assert _sample(text, "memstack_index_size", kind="entries") >= 1
    assert _sample(text, "memstack_index_memory_bytes", kind="held") > 0
    assert _sample(text, "memstack_index_memory_bytes", kind="bound") == registry.memory_bound()
    assert _sample(text, "memstack_index_caches") >= 1
    assert _sample(text, "memstack_index_evictions_total") >= 0
    info = client.get("/v1/info").json()["caches"]
    assert info["bytes"] > 0 and info["entries"] >= 1 and info["bound"] == registry.memory_bound()
    # Ids are tenant data: they never become label values.
    assert "secret-session" not in text and "green tea" not in text


def test_unmatched_paths_share_one_label(client: TestClient) -> None:
    client.get("/no/such/path-with-an-id-123")
    text = client.get("/metrics").text
    assert _sample(text, "memstack_http_requests_total", route="unmatched", status="404") == 1
    assert "path-with-an-id-123" not in text


def test_mcp_has_its_own_route_label(client: TestClient) -> None:
    client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    text = client.get("/metrics").text
    assert sum(_samples(text, "memstack_http_requests_total", route="/mcp")) >= 1
    assert not _samples(text, "memstack_http_requests_total", route="unmatched")


def _samples(text: str, name: str, **labels: str) -> list[float]:
    found = []
    for line in text.splitlines():
        if line.startswith(name + "{"):
            have = dict(re.findall(r'(\w+)="([^"]*)"', line.partition(" ")[0]))
            if all(have.get(k) == v for k, v in labels.items()):
                found.append(float(line.rsplit(" ", 1)[1]))
    return found


def test_open_waits_are_counted_while_they_wait(client: TestClient) -> None:
    response = client.get("/v1/shared/board/keys/k?wait=0.2")
    assert response.status_code == 408
    text = client.get("/metrics").text
    assert _sample(text, "memstack_open_waits") == 0
    route = "/v1/shared/{name}/keys/{key}"
    assert _sample(text, "memstack_http_requests_total", route=route, status="408") == 1


def test_metrics_token_is_required_when_set(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "scrape-secret")
    with TestClient(create_app(engine)) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert ok.status_code == 200 and ok.headers["content-type"].startswith("text/plain")


def test_healthz_and_readyz(client: TestClient, engine: Engine) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    ready = client.get("/readyz").json()
    assert ready == {"status": "ok", "engine": engine.name, "version": ready["version"]}


def test_readyz_is_503_once_the_engine_stops_answering(engine: Engine) -> None:
    with TestClient(create_app(engine, mcp=False)) as client:
        assert client.get("/readyz").status_code == 200
        engine.close()
        assert client.get("/healthz").status_code == 200  # the process still answers
        response = client.get("/readyz")
        assert response.status_code == 503
        assert response.json()["error"] == "EngineClosed" and engine.name in response.json()["detail"]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_reference_no_other_host(client: TestClient, path: str) -> None:
    html = client.get(path).text
    assert "openapi.json" in html
    assert "://" not in html and re.findall(r"(?:src|href)=[\"']?//", html) == []
    for asset in re.findall(r"[\"'](/docs-assets/[^\"']+)[\"']", html):
        response = client.get(asset)
        assert response.status_code == 200 and len(response.content) > 1000, asset


LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}
URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//([^/\s'\"<>?#]*)")
LOADED = re.compile(r"""\b(?:src|href|action|srcset)\s*=\s*["']?[^"'>\s]*//""", re.IGNORECASE)


def _external_urls(html: str) -> list[str]:
    """What in ``html`` would reach another machine: every ``//`` URL whose host is not loopback,
    and every attribute that would load a ``//`` URL at all (the inspector works offline; loopback
    addresses appear only as text, in example commands a user copies)."""
    found = [
        m.group(0)
        for m in URL.finditer(html)
        if re.sub(r":\d+$", "", m.group(1).rpartition("@")[2]) not in LOOPBACK
    ]
    return found + [m.group(0) for m in LOADED.finditer(html)]


def test_the_external_url_check_finds_what_it_guards_against() -> None:
    assert _external_urls("<pre>curl 'http://127.0.0.1:8765/v1/x' http://localhost/y</pre>") == []
    for bad in [
        '<script src="https://cdn.example.com/app.js"></script>',
        "<link rel=stylesheet href=//fonts.example.net/a.css>",
        '<img src="http://127.0.0.1:8765/x.png">',
        "<p>see https://example.org</p>",
    ]:
        assert _external_urls(bad), bad


def test_ui_is_served_from_the_package(client: TestClient) -> None:
    page = client.get("/ui/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    assert _external_urls(page.text) == []
    for asset in ["/ui/static/app.js", "/ui/static/app.css"]:
        assert client.get(asset).status_code == 200
    assert client.get("/ui", follow_redirects=False).status_code == 307


def _label_sets(text: str) -> dict[str, set[str]]:
    """Every value each label takes in the exposition."""
    found: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith("#") or "{" not in line:
            continue
        for name, value in re.findall(r'(\w+)="([^"]*)"', line.partition("} ")[0]):
            found.setdefault(name, set()).add(value)
    return found


def _series(text: str) -> set[str]:
    return {line.rpartition(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_junk_methods_and_paths_keep_every_label_in_a_closed_set(engine: Engine) -> None:
    rng = random.Random(27)

    def junk(client: TestClient, count: int) -> None:
        for _ in range(count):
            method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 12)))
            noise = "".join(rng.choices(string.ascii_letters + string.digits + "-_.~%", k=rng.randint(1, 40)))
            client.request(method, f"/{noise}")
            client.request(method, f"/v1/sessions/{noise}")
            client.request(rng.choice(["GET", "POST", "PUT", "DELETE"]), f"/v1/{noise}/x")
            client.get(f"/v1/sessions/{noise}", headers={"X-Memstack-Tenant": noise})

    app = create_app(engine, mcp=False)
    with TestClient(app) as client:
        client.get("/metrics")
        junk(client, 40)
        early = client.get("/metrics").text
        junk(client, 100)  # 400 more junk requests
        late = client.get("/metrics").text
    # A label per raw method or path would add a series per request (2,000 junk requests grew the
    # text from 82 KB to 4.75 MB before); closed sets leave at most a few combinations of known
    # values the first 160 did not hit.
    assert len(_series(late) - _series(early)) <= 60, sorted(_series(late) - _series(early))
    assert len(late) < 1.25 * len(early)
    labels = _label_sets(late)
    assert labels["method"] <= METHODS | {"OTHER"} and "OTHER" in labels["method"]
    templates = (
        {getattr(route, "path", "") for route in app.routes} | set(app.openapi()["paths"]) | {"unmatched"}
    )
    assert labels["route"] <= templates, labels["route"] - templates
    assert labels["status"] <= {str(int(s)) for s in http.HTTPStatus} | {"other"}
    error_names = {cls.__name__ for cls in _subclasses(MemstackError)} | set(TITLES.values())
    assert labels["type"] <= error_names | {"InternalError", "RequestValidationError", "HTTPError", "other"}
    assert labels["engine"] == {engine.name}


def _subclasses(cls: type) -> set[type]:
    found = {cls}
    for sub in cls.__subclasses__():
        found |= _subclasses(sub)
    return found


def test_metrics_never_wait_for_an_index_a_snapshot_is_serialising(engine: Engine) -> None:
    """A snapshot serialises a scope's BM25 index holding the index's lock (0.2 s at 100,000
    entries); the index gauges read their counts without it, so /metrics never holds the scope's
    cache lock, which every save of the scope needs, while it waits."""
    from memstack.doors.server.metrics import Metrics
    from memstack.tiers.longterm import LongTermMemory, index_cache

    memories = LongTermMemory(engine, "serialised")
    memories.save(content="the tram line closes in May")
    assert memories.search("tram")
    cache = index_cache.scope_cache(engine, "serialised")
    (index,) = cache.indexes.values()
    memories.save(content="a change since the bytes were last counted")
    rendered: list[bytes] = []
    reader = threading.Thread(target=lambda: rendered.append(Metrics().render()))
    with index._lock:  # what export_state holds while a snapshot serialises the index
        reader.start()
        reader.join(10)
        waited = reader.is_alive()
        free = cache.lock.acquire(timeout=10)  # and a save of the scope is not held up
        if free:
            cache.lock.release()
    reader.join()
    assert not waited and free
    assert _sample(rendered[0].decode(), "memstack_index_size", kind="bm25_documents") >= 1
