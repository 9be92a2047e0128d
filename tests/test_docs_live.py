"""The shell blocks of the README and of docs/ run as written, page by page, against a live
``memstack serve`` (keyless, on a SQLite file of their own) and its CLI; the MCP client
configurations of docs/mcp.md are started (stdio) or connected to (HTTP) with the official client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from _docblocks import DOC_FILES, ROOT, Block, blocks

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

PLACEHOLDER = "/ABSOLUTE/PATH/TO/memstack"


@dataclass
class Checkout:
    """A directory standing in for the reader's checkout: ``.venv/bin/memstack`` and
    ``.venv/bin/python`` run this tree's memstack on the engine of ``env``."""

    root: Path
    env: dict[str, str]
    port: int = 0

    def run(self, code: str) -> subprocess.CompletedProcess[str]:
        code = code.replace("localhost:8765", f"localhost:{self.port}").replace(
            "127.0.0.1:8765", f"127.0.0.1:{self.port}"
        )
        return subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", code],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    wrapper = bin_dir / "memstack"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memstack "$@"\n')
    wrapper.chmod(0o755)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
        "MEMSTACK_URL": f"sqlite:///{tmp_path / 'docs.db'}",
        "MEMSTACK_EMBEDDER": "none",  # the examples' answers do not depend on the model; the start does
    }
    env.pop("MEMSTACK_TENANT", None)
    return Checkout(tmp_path, env)


@pytest.fixture
def served(checkout: Checkout) -> Iterator[Checkout]:
    """``.venv/bin/memstack serve`` of the checkout, keyless, on a free port."""
    checkout.port = _free_port()
    log = (checkout.root / "serve.log").open("w")
    process = subprocess.Popen(
        [str(checkout.root / ".venv/bin/memstack"), "serve", "--port", str(checkout.port)],
        cwd=checkout.root,
        env=checkout.env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{checkout.port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, (checkout.root / "serve.log").read_text()
            assert time.monotonic() < deadline, "serve did not answer in 60 s"
            time.sleep(0.1)
        yield checkout
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _shell_pages() -> list[Path]:
    return [p for p in DOC_FILES if any(b.lang == "bash" for b in blocks(p))]


@pytest.mark.parametrize("page", _shell_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shell_blocks_run_against_a_live_server(page: Path, request: pytest.FixtureRequest) -> None:
    shell = [b for b in blocks(page) if b.lang == "bash"]
    runnable = [b for b in shell if b.skip_reason() is None]
    if not runnable:  # no server started for nothing; the reasons are the skip message
        pytest.skip("; ".join(f"{b.name}: {b.skip_reason()}" for b in shell))
    served: Checkout = request.getfixturevalue("served")
    for block in runnable:
        done = served.run(block.code)
        assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def _configurations() -> list[tuple[Block, dict[str, Any]]]:
    found = []
    for block in blocks(ROOT / "docs" / "mcp.md"):
        if block.lang == "json":
            document = json.loads(block.code)
            for server in (document.get("mcpServers") or document["servers"]).values():
                found.append((block, server))
    return found


async def _tools(client: Client) -> list[str]:
    names = [tool.name for tool in (await client.list_tools()).tools]
    saved = await client.call_tool("save_memory", {"content": "Ada prefers tea", "session_id": "docs"})
    assert not saved.is_error, saved
    return names


def test_every_client_has_a_stdio_and_an_http_configuration() -> None:
    kinds = [("command" in server, "url" in server) for _, server in _configurations()]
    assert (
        kinds.count((True, False)) == 3 and kinds.count((False, True)) == 2
    )  # VS Code, Cursor; Desktop: stdio


@pytest.mark.parametrize(
    "configuration", [c for c in _configurations() if "command" in c[1]], ids=lambda c: c[0].name
)
def test_stdio_configurations_start_a_server(
    configuration: tuple[Block, dict[str, Any]], checkout: Checkout
) -> None:
    _, server = configuration
    command = server["command"].replace(PLACEHOLDER, str(checkout.root))
    assert Path(command).is_file(), command
    parameters = StdioServerParameters(
        command=command, args=server["args"], env=checkout.env, cwd=checkout.root
    )

    async def run() -> list[str]:
        async with Client(stdio_client(parameters)) as client:
            return await _tools(client)

    assert "search_memory" in asyncio.run(run())


@pytest.mark.parametrize(
    "configuration", [c for c in _configurations() if "url" in c[1]], ids=lambda c: c[0].name
)
def test_http_configurations_connect(configuration: tuple[Block, dict[str, Any]], served: Checkout) -> None:
    _, server = configuration
    url = server["url"].replace("127.0.0.1:8765", f"127.0.0.1:{served.port}")

    async def run() -> list[str]:
        http = create_mcp_http_client(headers=server.get("headers"))
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            return await _tools(client)

    assert "search_memory" in asyncio.run(run())
