"""The one strict time rule: epoch seconds or ISO-8601 with a zone, years 1-9999."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack.foundation.timefmt import strict_instant


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-11-23T20:16:47Z", datetime(2026, 11, 23, 20, 16, 47, tzinfo=UTC)),
        ("2026-11-23T21:16:47+01:00", datetime(2026, 11, 23, 20, 16, 47, tzinfo=UTC)),
        ("1795465007", datetime(2026, 11, 23, 20, 16, 47, tzinfo=UTC)),
        (1795465007.5, datetime(2026, 11, 23, 20, 16, 47, 500000, tzinfo=UTC)),
        ("99999999999", datetime.fromtimestamp(99999999999, UTC)),  # seconds, never milliseconds
    ],
)
def test_seconds_and_zoned_iso_are_read(given: object, expected: datetime) -> None:
    assert strict_instant(given) == expected


@pytest.mark.parametrize(
    "given",
    [
        "2026-11-23T20:16:47",  # no zone: a guess
        "2026-11-23",
        "9999-12-31T23:59:59.999999Z",  # rounds into year 10000 as epoch seconds
        "99999999999999999",
        -1e20,
        True,
        "soon",
        None,
        [],
    ],
)
def test_the_rest_is_refused(given: object) -> None:
    assert strict_instant(given) is None
