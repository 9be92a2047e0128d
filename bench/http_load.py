"""Closed-loop HTTP load against `memstack serve` on loopback: mixed session and search requests.

    python bench/http_load.py [--url ENGINE_URL] [--quick | --smoke] [--clients 32] [--seconds 20]

Starts `memstack serve` (this repository's CLI) on a free 127.0.0.1 port with the given engine URL
(default: a fresh SQLite file), seeds it, then runs the load from a SECOND process: N concurrent
clients, each sending its next request as soon as the previous answer arrived. The mix: session
put (40 %), session get (30 %), increment (10 %), long-term search (20 %). Prints throughput,
latency percentiles and errors; last line:

    RESULT engine=<name> rps=<n> p50_ms=<x> p99_ms=<y> errors=<k>

The ratio peer in the same run is `GET /healthz` under the same load (the server's own floor).
The server resolves its retrieval setting as `memstack serve` always does (`MEMSTACK_EMBEDDER`, else
the local model when installed): the engine and the search mode come from `GET /v1/info`.
`--smoke`: 4 clients for 1 s on 5 sessions and 20 memories.

`--throttle` measures what the hostile-world defences cost instead: two servers in keys mode on
one engine, one with throttling off (no failed-authentication throttle, a key without a rate), one
with throttling on (the default throttle, and a key with a per-key rate it never reaches, so every
request also counts in the engine), the same mixed load on each, alternated; last line:

    RESULT throttle=1 engine=<name> rps_off=<n> rps_on=<n> on_vs_off=<ratio> errors=<k>

`--hostile` runs the mixed load (keys mode) alone, then again with 200 slow anonymous clients
alongside (each trickles a request head or a keyless body a few bytes at a time, reconnecting
when the server closes it); last line (target: p99 within 3x, 0 errors):

    RESULT hostile=1 engine=<name> p99_alone_ms=<x> p99_hostile_ms=<y> ratio=<r> errors=<k>
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs

WORDS = [
    "coffee",
    "tea",
    "jazz",
    "concert",
    "hiking",
    "berlin",
    "paris",
    "invoice",
    "budget",
    "deadline",
    "python",
    "rust",
    "garden",
    "dog",
    "cat",
    "birthday",
    "meeting",
    "flight",
    "hotel",
    "allergy",
    "peanut",
    "doctor",
    "gym",
    "running",
    "book",
    "novel",
    "piano",
    "guitar",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(url: str, port: int, *extra: str) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).with_name("memstack")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memstack.doors.cli"]
    env = {**os.environ, "MEMSTACK_URL": url}
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", str(port), "--log-level", "warning", *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"memstack serve exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("memstack serve did not come up within 30 s")


def seed(base: str, sessions: int, memories: int) -> None:
    import httpx

    rng = random.Random(7)
    with httpx.Client(base_url=base, timeout=30, headers=_auth()) as client:
        for i in range(sessions):
            client.post("/v1/sessions", json={"session_id": f"load-{i}"})
        for _ in range(memories):
            text = " ".join(rng.choices(WORDS, k=12))
            client.post("/v1/memories", json={"content": text, "category": "bench"})


async def _client_loop(
    base: str, seconds: float, sessions: int, seed_value: int, mix: str, out: list[tuple[str, float, int]]
) -> None:
    import httpx

    rng = random.Random(seed_value)
    deadline = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=30, headers=_auth()) as client:
        while time.perf_counter() < deadline:
            sid = f"load-{rng.randrange(sessions)}"
            roll = rng.random()
            if mix == "health":
                kind, request = "health", client.get("/healthz")
            elif roll < 0.4:
                body = {"value": {"note": " ".join(rng.choices(WORDS, k=20)), "n": rng.random()}}
                kind, request = "put", client.put(f"/v1/sessions/{sid}/keys/k{rng.randrange(20)}", json=body)
            elif roll < 0.7:
                kind, request = "get", client.get(f"/v1/sessions/{sid}")
            elif roll < 0.8:
                kind, request = (
                    "incr",
                    client.post(f"/v1/sessions/{sid}/keys/counter/increment", json={"amount": 1}),
                )
            else:
                query = " ".join(rng.choices(WORDS, k=3))
                kind, request = "search", client.get("/v1/memories", params={"query": query, "limit": 10})
            started = time.perf_counter()
            try:
                status = (await request).status_code
            except httpx.HTTPError:
                status = 0
            out.append((kind, (time.perf_counter() - started) * 1000, status))


def load_process(base: str, clients: int, seconds: float, sessions: int, mix: str) -> None:
    """Runs in the second process: prints one JSON document with every sample."""
    samples: list[tuple[str, float, int]] = []

    async def main() -> None:
        await asyncio.gather(
            *(_client_loop(base, seconds, sessions, i, mix, samples) for i in range(clients))
        )

    started = time.perf_counter()
    asyncio.run(main())
    elapsed = time.perf_counter() - started
    print(json.dumps({"elapsed": elapsed, "samples": samples}))


def run_load(base: str, clients: int, seconds: float, sessions: int, mix: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--_load", base, str(clients), str(seconds), str(sessions), mix],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(proc.stdout)
    samples = data["samples"]
    latencies = sorted(s[1] for s in samples)
    errors = sum(1 for s in samples if not 200 <= s[2] < 300)
    return {
        "requests": len(samples),
        "rps": len(samples) / data["elapsed"],
        "p50": statistics.median(latencies),
        "p99": latencies[int(0.99 * (len(latencies) - 1))],
        "errors": errors,
        "by_kind": {k: sum(1 for s in samples if s[0] == k) for k in sorted({s[0] for s in samples})},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="engine URL for the server (default: a fresh SQLite file)")
    parser.add_argument("--quick", action="store_true", help="short run (< 60 s)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--_load", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--_slow", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--hostile", action="store_true", help="the load beside 200 slow anonymous clients")
    parser.add_argument("--throttle", action="store_true", help="throttling on against off (see above)")
    add_smoke(parser)
    args = parser.parse_args()
    if args._load:
        base, clients, seconds, sessions, mix = args._load
        load_process(base, int(clients), float(seconds), int(sessions), mix)
        return
    if args._slow:
        asyncio.run(_slow_clients(args._slow[0], int(args._slow[1]), float(args._slow[2])))
        return
    if args.hostile:
        hostile_comparison(args, args.seconds or (1.0 if args.smoke else 5.0 if args.quick else 15.0))
        return
    if args.throttle:
        throttle_comparison(args.url, args.clients, args.seconds or (3.0 if args.quick else 6.0), args.quick)
        return
    seconds = args.seconds or (1.0 if args.smoke else 8.0 if args.quick else 30.0)
    sessions, memories = (5, 20) if args.smoke else (50, 300) if args.quick else (200, 2000)
    clients = 4 if args.smoke else args.clients
    with tempfile.TemporaryDirectory(prefix="memstack-http-") as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'load.db'}"
        port = free_port()
        server = start_server(url, port)
        base = f"http://127.0.0.1:{port}"
        try:
            info = json.loads(_get(base + "/v1/info"))
            engine, mode = info["engine"], info["retrieval"]["mode"]
            seed(base, sessions, memories)
            floor = run_load(base, clients, min(seconds, 5.0), sessions, "health")
            mixed = run_load(base, clients, seconds, sessions, "mixed")
        finally:
            server.terminate()
            server.wait(timeout=20)
    print(f"engine            {engine} ({url}); search {mode}")
    print(f"clients           {clients} (closed loop, second process), {seconds:.0f} s")
    print(f"mix               {mixed['by_kind']}")
    print(f"mixed rps         {mixed['rps']:.0f}")
    print(f"mixed p50 / p99   {mixed['p50']:.2f} / {mixed['p99']:.2f} ms")
    print(f"errors            {mixed['errors']} of {mixed['requests']}")
    print(f"/healthz rps      {floor['rps']:.0f} (the server's floor, same run)")
    print(f"mixed_vs_health   {float(mixed['rps']) / float(floor['rps']):.2f}")  # type: ignore[arg-type]
    print(
        f"RESULT engine={engine} rps={mixed['rps']:.0f} p50_ms={mixed['p50']:.2f} "
        f"p99_ms={mixed['p99']:.2f} errors={mixed['errors']} "
        f"rps_vs_health={float(mixed['rps']) / float(floor['rps']):.2f}"  # type: ignore[arg-type]
        f"{smoke_tag(args)}"
    )


TOKEN_ENV = "MEMSTACK_BENCH_TOKEN"  # the load process's key (set by --throttle, inherited)


def _auth() -> dict[str, str]:
    token = os.environ.get(TOKEN_ENV)
    return {"Authorization": f"Bearer {token}"} if token else {}


def _create_key(url: str, *extra: str) -> str:
    command = [
        sys.executable,
        "-m",
        "memstack.doors.cli",
        "--url",
        url,
        "--json",
        "keys",
        "create",
        "--tenant",
        "bench",
    ]
    done = subprocess.run([*command, *extra], capture_output=True, text=True, check=True)
    token: str = json.loads(done.stdout)["token"]
    return token


def throttle_comparison(url_arg: str | None, clients: int, seconds: float, quick: bool) -> None:
    """The mixed load on a server with throttling off and one with it on (one engine), alternated."""
    sessions, memories = (50, 300) if quick else (200, 2000)
    rounds = 4 if quick else 10  # many short runs, alternated: a shared machine's drift hits both alike
    with tempfile.TemporaryDirectory(prefix="memstack-http-") as tmp:
        url = url_arg or f"sqlite:///{Path(tmp) / 'load.db'}"
        tokens = {"off": _create_key(url), "on": _create_key(url, "--rate", str(10**9))}
        ports = {"off": free_port(), "on": free_port()}
        servers = {
            "off": start_server(url, ports["off"], "--auth", "keys", "--auth-failure-burst", "0"),
            "on": start_server(url, ports["on"], "--auth", "keys"),
        }
        runs: dict[str, list[dict[str, object]]] = {"off": [], "on": []}
        try:
            os.environ[TOKEN_ENV] = tokens["off"]
            seed(f"http://127.0.0.1:{ports['off']}", sessions, memories)
            engine = json.loads(_get(f"http://127.0.0.1:{ports['off']}/readyz"))["engine"]
            for turn in range(rounds):
                for mode in ("off", "on") if turn % 2 == 0 else ("on", "off"):
                    os.environ[TOKEN_ENV] = tokens[mode]
                    base = f"http://127.0.0.1:{ports[mode]}"
                    runs[mode].append(run_load(base, clients, seconds, sessions, "mixed"))
        finally:
            os.environ.pop(TOKEN_ENV, None)
            for server in servers.values():
                server.terminate()
                server.wait(timeout=20)
    rps = {}
    for mode, done in runs.items():
        figures = [_figures(r) for r in done]
        rps[mode] = sum(n for n, _, _ in figures) / sum(n / r for n, r, _ in figures)
        each = ", ".join(f"{r:.0f}" for _, r, _ in figures)
        print(f"throttling {mode:<4}  {rps[mode]:.0f} rps ({each} per run of {seconds:.0f} s)")
    errors = sum(_figures(r)[2] for done in runs.values() for r in done)
    print(f"engine            {engine} ({url}), {clients} clients, {rounds} rounds each, keys mode")
    print(
        f"RESULT throttle=1 engine={engine} rps_off={rps['off']:.0f} rps_on={rps['on']:.0f} "
        f"on_vs_off={rps['on'] / rps['off']:.3f} errors={errors}"
    )


async def _slow_client(host: str, port: int, until: float, n: int) -> None:
    head = b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
    body = b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" + b"a" * 4000
    payload = head if n % 2 else body
    while time.monotonic() < until:
        try:
            _, writer = await asyncio.open_connection(host, port)
            for at in range(0, len(payload), 8):
                if time.monotonic() >= until:
                    break
                writer.write(payload[at : at + 8])
                await writer.drain()
                await asyncio.sleep(0.2)
            writer.close()
        except OSError:
            await asyncio.sleep(0.2)  # closed by the server: come back, as an attacker does


async def _slow_clients(base: str, count: int, seconds: float) -> None:
    host, port = base.removeprefix("http://").split(":")
    until = time.monotonic() + seconds
    await asyncio.gather(*(_slow_client(host, int(port), until, n) for n in range(count)))


def hostile_comparison(args: argparse.Namespace, seconds: float) -> None:
    """The mixed load alone, then beside 200 slow anonymous clients (keys mode, one server)."""
    sessions, memories = (5, 20) if args.smoke else (50, 300) if args.quick else (200, 2000)
    clients, slow = (4, 20) if args.smoke else (args.clients, 200)
    with tempfile.TemporaryDirectory(prefix="memstack-http-") as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'load.db'}"
        os.environ[TOKEN_ENV] = _create_key(url)
        port = free_port()
        server = start_server(url, port, "--auth", "keys", "--head-timeout", "5", "--body-timeout", "10")
        base = f"http://127.0.0.1:{port}"
        try:
            seed(base, sessions, memories)
            engine = json.loads(_get(base + "/readyz"))["engine"]
            alone = run_load(base, clients, seconds, sessions, "mixed")
            attackers = subprocess.Popen(
                [sys.executable, __file__, "--_slow", base, str(slow), str(seconds + 3)]
            )
            try:
                time.sleep(1.0)  # the slow clients connect first
                beside = run_load(base, clients, seconds, sessions, "mixed")
            finally:
                attackers.wait(timeout=60)
        finally:
            os.environ.pop(TOKEN_ENV, None)
            server.terminate()
            server.wait(timeout=20)
    ratio = float(str(beside["p99"])) / max(float(str(alone["p99"])), 1e-9)
    errors = int(str(alone["errors"])) + int(str(beside["errors"]))
    print(f"engine            {engine} ({url}), {clients} clients, {seconds:.0f} s, keys mode")
    print(f"alone             p99 {alone['p99']:.2f} ms, {alone['rps']:.0f} rps, {alone['errors']} errors")
    print(
        f"beside {slow} slow  p99 {beside['p99']:.2f} ms, {beside['rps']:.0f} rps, {beside['errors']} errors"
    )
    print(
        f"RESULT hostile=1 engine={engine} p99_alone_ms={alone['p99']:.2f} "
        f"p99_hostile_ms={beside['p99']:.2f} ratio={ratio:.2f} errors={errors}{smoke_tag(args)}"
    )


def _figures(run: dict[str, object]) -> tuple[float, float, int]:
    """``(requests, rps, errors)`` of one :func:`run_load` result."""
    return float(str(run["requests"])), float(str(run["rps"])), int(str(run["errors"]))


def _get(url: str) -> str:
    import httpx

    return httpx.get(url, timeout=10).text


if __name__ == "__main__":
    main()
