"""A forget killed (SIGKILL) at random moments on SQLite finishes when run again: ``remaining`` is 0,
no half-object is left, and the other scope is untouched."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import memstack

from .consistency import consistency_problems

CHILD = """
import sys, memstack
with memstack.open(sys.argv[1]) as mem:
    print("go", flush=True)
    mem.forget(scope="big")
"""


def test_a_killed_forget_resumes_to_completion(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    with memstack.open(url) as mem:
        big, other = mem.long_term("big"), mem.long_term("other")
        for n in range(3000):
            big.save(content=f"big fact {n}")
        other.save(content="keep me")
    rng = random.Random(20261124)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, url], stdout=subprocess.PIPE, text=True, env=env
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "go"
        time.sleep(rng.uniform(0.0, 0.15))  # a random moment inside the forget (a real process)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    with memstack.open(url) as mem:
        report = mem.forget(scope="big")
        assert report.remaining == 0
        assert consistency_problems(mem.engine) == []
        assert mem.long_term("big").entries() == []
        assert [e.content for e in mem.long_term("other").entries()] == ["keep me"]
