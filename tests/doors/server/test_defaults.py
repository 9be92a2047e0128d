"""The server's limits table: each row's environment rule, and the docs' tables agree with the rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memstack.doors.server.defaults import AUTH_FAILURE_BURST, AUTH_FAILURE_RATE, LIMITS, MAX_BODY_BYTES
from memstack.foundation.errors import InvalidConfiguration

DOCS = Path(__file__).resolve().parents[3] / "docs"
_UNITS = {"": 1, "MiB": 1 << 20}


def test_a_given_value_wins_then_the_variable_then_the_default() -> None:
    env = {"MEMSTACK_AUTH_FAILURE_BURST": "3"}
    assert AUTH_FAILURE_BURST.resolve(7, env) == 7
    assert AUTH_FAILURE_BURST.resolve(None, env) == 3
    assert AUTH_FAILURE_BURST.resolve(None, {}) == AUTH_FAILURE_BURST.default == 10
    assert AUTH_FAILURE_RATE.resolve(None, {"MEMSTACK_AUTH_FAILURE_RATE": "0.5"}) == 0.5
    assert MAX_BODY_BYTES.resolve(None, {"MEMSTACK_AUTH_FAILURE_BURST": "3"}) == MAX_BODY_BYTES.default


def test_a_bad_variable_is_refused_by_its_name() -> None:
    with pytest.raises(InvalidConfiguration, match=r"\$MEMSTACK_AUTH_FAILURE_BURST='2.5': expected a int"):
        AUTH_FAILURE_BURST.resolve(None, {"MEMSTACK_AUTH_FAILURE_BURST": "2.5"})


def test_every_row_has_its_own_name_and_option() -> None:
    assert len({limit.name for limit in LIMITS}) == len({limit.option for limit in LIMITS}) == len(LIMITS)
    assert all(limit.option.startswith("--") and limit.help.endswith(".") for limit in LIMITS)


def test_the_docs_tables_show_each_limits_default() -> None:
    shown: dict[str, float] = {}
    for page in DOCS.glob("*.md"):
        for option, number, unit in re.findall(
            r"^\| `(--[a-z-]+) [A-Z]+` \| ([\d.]+) ?(MiB)? \|", page.read_text(), re.M
        ):
            shown[option] = float(number) * _UNITS[unit]
    documented = [limit for limit in LIMITS if limit.option in shown]
    assert len(documented) >= 8, sorted(shown)
    assert {limit.option: shown[limit.option] for limit in documented} == {
        limit.option: limit.default for limit in documented
    }
