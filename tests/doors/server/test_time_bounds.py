"""Times at the edge of what a datetime holds are refused with 400 naming the rule, never a 500."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from memstack.foundation.errors import InvalidValue
from memstack.tiers.longterm.validate import check_time


@pytest.mark.parametrize("as_of", ["9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.9999999Z"])
def test_the_last_instant_of_year_9999_is_a_400(client: TestClient, as_of: str) -> None:
    client.post("/v1/memories?scope=s", json={"content": "hello world"})
    answer = client.get("/v1/memories", params={"scope": "s", "query": "hello", "as_of": as_of})
    assert answer.status_code == 400, answer.text
    assert "9999" in answer.text or "as_of" in answer.text


def test_a_time_in_range_still_answers(client: TestClient) -> None:
    client.post("/v1/memories?scope=s", json={"content": "hello world"})
    answer = client.get(
        "/v1/memories", params={"scope": "s", "query": "hello", "as_of": "9999-12-30T00:00:00Z"}
    )
    assert answer.status_code == 200


def test_check_time_refuses_what_epoch_seconds_cannot_hold() -> None:
    with pytest.raises(InvalidValue, match="years 1-9999"):
        check_time(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "as_of")
    assert check_time(datetime(9999, 12, 31, tzinfo=UTC), "as_of") is not None
