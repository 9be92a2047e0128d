"""A worker process for the cross-process tests: ``python _worker.py URL INDEX INCREMENTS``.

Announces itself, blocks until the coordinator writes ``go``, then does INCREMENTS compare-and-set
increments of ``counter`` (retrying on Conflict) and writes ``done:INDEX`` with its retry count.
"""

from __future__ import annotations

import sys

from memstack.engines import open_engine
from memstack.foundation.errors import Conflict
from memstack.tiers.shared import SharedMemory


def main(url: str, index: int, increments: int) -> None:
    engine = open_engine(url)
    memory = SharedMemory(engine, "mp", writer=f"w{index}", enable_cache=False)
    try:
        memory[f"ready:{index}"] = True
        memory.get("go", wait=60)
        retries = 0
        for _ in range(increments):
            while True:
                value, version = memory.get_with_version("counter")
                try:
                    memory.set_if("counter", (value or 0) + 1, version=version)
                    break
                except Conflict:
                    retries += 1
        memory[f"done:{index}"] = retries
    finally:
        memory.close()
        engine.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
