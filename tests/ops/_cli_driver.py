"""Runs ``python -m memstack`` commands in one real process, one after another.

Each line on standard input is a JSON list of arguments; the module ``memstack`` runs as
``__main__`` with them (exactly what ``python -m memstack ARGS`` runs), and one JSON line
``{"code", "stdout", "stderr"}`` answers on standard output. One process serves many commands so
a test of every operation does not pay the interpreter's start-up once per command.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys


def run(argv: list[str]) -> dict[str, object]:
    out, err = io.StringIO(), io.StringIO()
    code: object = 0
    sys.argv = ["memstack", *argv]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_module("memstack", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            code = exc.code if exc.code is not None else 0
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> None:
    answers = sys.stdout
    for line in sys.stdin:
        if line.strip():
            answers.write(json.dumps(run(json.loads(line))) + "\n")
            answers.flush()


if __name__ == "__main__":
    main()
