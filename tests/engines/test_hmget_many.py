"""``hmget`` of many fields on every engine: in order, repeats and misses included."""

from __future__ import annotations

from memstack.engines import Engine


def test_hmget_of_many_fields_in_order_with_repeats_and_misses(engine: Engine) -> None:
    # SQLite reads 8 fields or more by statements of 64 (a short one repeats its last field)
    key = f"t:{engine.tag('s')}:many"
    engine.hset(key, {f"f{n}": f"v{n}" for n in range(0, 150, 2)})
    for count in (7, 8, 63, 64, 65, 150):
        fields = [*(f"f{n}" for n in reversed(range(count))), "f0", "f1", "f0"]
        expected = [*(f"v{n}" if n % 2 == 0 else None for n in reversed(range(count))), "v0", None, "v0"]
        assert engine.hmget(key, fields) == expected, count
