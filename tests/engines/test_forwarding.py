"""The forwarding base passes every call of the engine seam to the engine it wraps, on every engine,
and the seam cannot grow a method the base does not forward."""

from __future__ import annotations

import queue

from memstack.engines import Engine
from memstack.engines.forwarding import ForwardingEngine
from memstack.foundation.closing import Closing

# What a view derives from its own attributes instead of asking the inner engine: the attributes
# the base copies, and methods built on them (``batch`` and every command run through ``execute``;
# ``now_ms`` reads the shared clock; ``tag`` reads ``clustered``).
DERIVED = {"name", "clustered", "scan_repeats", "now_ms", "batch", "tag"}


def _public(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_every_method_of_the_seam_is_forwarded() -> None:
    seam = _public(Engine) | _public(Closing)
    assert _public(ForwardingEngine) == seam - DERIVED
    assert not DERIVED & _public(ForwardingEngine)  # a derived method overridden would skip the view


def test_a_view_answers_as_its_engine(engine: Engine) -> None:
    view = ForwardingEngine(engine)
    shape = (engine.name, engine.clustered, engine.scan_repeats)
    assert (view.name, view.clustered, view.scan_repeats) == shape
    assert view.clock is engine.clock and view.url == engine.url and view.identity == engine.identity
    view.set("k:1", "one")
    with view.batch() as batch:
        batch.hset("k:2", {"f": "v"})
    assert engine.get("k:1") == "one" and engine.hgetall("k:2") == {"f": "v"}
    assert sorted(view.scan("k:")) == ["k:1", "k:2"]
    assert sorted(key for page in view.scan_pages("k:", 1) for key in page) == ["k:1", "k:2"]
    assert sorted(view.raw_items()) == sorted(engine.raw_items())
    view.publish("news", "kept for listeners")  # SQLite keeps it as an internal record
    internal = sorted(view.internal_items())
    assert internal == sorted(engine.internal_items())
    assert view.drop_internal([where for where, _ in internal]) == len(internal)
    assert not set(internal) & set(engine.internal_items())  # dropped, or left as husks
    view.compact()
    assert view.ping()


def test_a_view_subscribes_flushes_and_closes_through_its_engine(engine: Engine) -> None:
    view = ForwardingEngine(engine)
    got: queue.Queue[str] = queue.Queue()
    with view.subscribe("news", got.put):
        engine.publish("news", "hello")
        assert got.get(timeout=5) == "hello"
    engine.set("k", "v")
    view.flush()
    assert list(engine.scan("")) == []
    view.close()
    assert engine.set("still", "open")
