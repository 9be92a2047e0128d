"""The suite-wide check of tests/keyspace_guard.py fails a test that makes memstack write a key no
keyspace family declares, and lets a test write its own keys through an engine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from keyspace_guard import written

TESTS = Path(__file__).resolve().parents[2]

MODULE = """
import memstack

# Code running as a memstack module: what a tier with a key outside the registry would do.
TIER = {"__name__": "memstack.some_tier"}
exec("def write(engine, key):\\n    engine.set(key, 'v')", TIER)


def test_memstack_writes_an_undeclared_key():
    with memstack.open("memory://") as mem:
        TIER["write"](mem.engine, "nobody:declares:this")


def test_memstack_writes_a_declared_key():
    with memstack.open("memory://") as mem:
        TIER["write"](mem.engine, "rr:memory:s1:k")


def test_a_test_writes_its_own_keys():
    with memstack.open("memory://") as mem:
        mem.engine.set("my:own:key", "v")
"""


def test_an_undeclared_key_written_by_memstack_fails_its_test(tmp_path: Path) -> None:
    (tmp_path / "test_writes.py").write_text(MODULE)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["keyspace_guard"]\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 error" in out and "failed" not in out, out  # only the undeclared write errs
    # memstack.open gives tenant default's view: the guard sees the engine's key, prefix included
    declared = "keys no keyspace family declares: 't:default:nobody:declares:this'"
    assert f"{declared} (by memstack.some_tier)" in out


def test_the_keys_of_write_commands_are_read_from_the_command_table() -> None:
    ops = [
        ("set", ("a", "1", None, False, False, False)),
        ("get", ("b",)),
        ("delete", ("c", "d")),
        ("publish", ("channel", "m")),
        ("bogus", ()),
        ("set",),
    ]
    assert list(written(ops)) == ["a", "c", "d", "channel"]  # type: ignore[arg-type]
