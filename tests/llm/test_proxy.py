"""The model client goes through the proxy the environment names (``HTTP_PROXY``), skips it for
the hosts ``NO_PROXY`` lists, and tunnels ``https://`` endpoints: a real forwarding proxy on
loopback (no ``CONNECT``: it forwards absolute-URL requests) in front of a real endpoint."""

from __future__ import annotations

import base64
import contextlib
import http.client
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memstack.llm._proxy import route_of
from memstack.llm.chat import ChatClient, message_text
from services.dream._openai_server import fake_openai


class Proxy:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []  # request target, Proxy-Authorization
        self.url = ""


def _handler(proxy: Proxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            proxy.seen.append((self.path, self.headers.get("Proxy-Authorization")))
            target = urllib.parse.urlsplit(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            upstream = http.client.HTTPConnection(target.hostname or "", target.port, timeout=10)
            try:
                passed = {k: v for k, v in self.headers.items() if k.lower() != "proxy-authorization"}
                upstream.request("POST", target.path, body, passed)
                reply = upstream.getresponse()
                payload = reply.read()
            finally:
                upstream.close()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
            pass

    return Handler


@contextlib.contextmanager
def forwarding_proxy() -> Iterator[Proxy]:
    proxy = Proxy()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(proxy))
    server.daemon_threads = True
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _no_inherited_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_an_http_endpoint_is_asked_through_the_environments_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_openai(["through the proxy"]) as model, forwarding_proxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.replace("http://", "http://ops:p%40ss@"))
        reply = message_text(
            ChatClient(model.url, "m", retries=0).complete([{"role": "user", "content": "hi"}])
        )
    assert reply == "through the proxy"
    (target, auth), *_ = proxy.seen
    assert target == f"{model.url}/chat/completions"  # the absolute URL: a forwarding proxy's form
    assert auth == "Basic " + base64.b64encode(b"ops:p@ss").decode()
    assert "proxy-authorization" not in model.headers[0]  # spent on the proxy, never forwarded


def test_no_proxy_hosts_are_asked_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_openai(["direct"]) as model, forwarding_proxy() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
        assert message_text(ChatClient(model.url, "m", retries=0).complete([])) == "direct"
    assert proxy.seen == []


def test_without_a_proxy_the_call_is_direct() -> None:
    with fake_openai(["direct"]) as model:
        assert message_text(ChatClient(model.url, "m", retries=0).complete([])) == "direct"


def test_an_https_endpoint_is_tunnelled_so_the_proxy_never_sees_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://u:secret@proxy.internal:3128")
    route = route_of("https://api.example.com:8443/v1/chat/completions?x=1")
    assert (route.https, route.host, route.port) == (True, "proxy.internal", 3128)
    assert route.tunnel == ("api.example.com", 8443)
    assert route.target == "/v1/chat/completions?x=1"
    assert route.request_headers({"A": "b"}) == {"A": "b"}  # the credentials go on CONNECT only
    assert route.proxy_headers["Proxy-Authorization"] == "Basic " + base64.b64encode(b"u:secret").decode()
    monkeypatch.setenv("NO_PROXY", ".example.com")
    assert route_of("https://api.example.com/v1").tunnel is None
