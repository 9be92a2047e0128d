"""The house has no import circle and nothing imports a higher layer.

Every ``import`` and ``from … import`` of every module of ``src/memstack`` counts, at any depth:
inside functions and under ``if TYPE_CHECKING:`` too. A module's layer is its folder: the first
package under ``src/memstack`` (``memstack.tiers.longterm.store`` is in ``tiers``). ``LAYERS``
orders the folders, bottom to top; the package's face (``__init__``, ``__main__``) shares the top
layer with the doors (they read its ``__version__``), and no other module may sit loose at the top.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "memstack"
LAYERS: tuple[tuple[str, ...], ...] = (
    ("foundation",),  # errors, clock, limits, redaction, time formats, JSON text, the keyspace
    ("engines", "llm"),  # the storage seam with one subpackage per engine; model clients
    ("search",),  # tokenisers, BM25, embedders, filters, fusion: pure logic, no storage
    ("index",),  # the engine-backed index kit: change logs, mirrors, vectors, codecs
    ("tiers",),  # session, conversation, long-term, working and shared memory
    ("compat",),  # the original systems' APIs, built on the tiers
    ("services",),  # the memory's construction, dream, lifecycle, transfer, the memory loop
    ("agent",),  # the context builder, the agent tools, the LangGraph store's core
    ("ops",),  # the operations registry and the wire
    ("doors",),  # CLI, HTTP and MCP server, framework integrations
)
FACE = ("__init__", "__main__")


def layers() -> dict[str, int]:
    """Top-level package name (``engines``, ``tiers``) or face module -> its layer number."""
    found = {name: number for number, names in enumerate(LAYERS, 1) for name in names}
    found.update(dict.fromkeys(FACE, len(LAYERS)))
    return found


def modules() -> dict[str, Path]:
    """``memstack.x.y`` -> its file."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(name: str, path: Path, node: ast.Import | ast.ImportFrom, known: set[str]) -> Iterator[str]:
    """The memstack modules ``node`` imports (the longest known module each name resolves to)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join([*base, *([node.module] if node.module else [])])
        else:
            module = node.module or ""
        targets = [f"{module}.{alias.name}" for alias in node.names]
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target.startswith("memstack"):
            yield target


def graph() -> dict[str, set[str]]:
    """Module -> the memstack modules it imports anywhere in its source."""
    found = modules()
    known = set(found)
    edges: dict[str, set[str]] = {}
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))
        edges[name] = {t for node in imports for t in _imported(name, path, node, known) if t != name}
    return edges


def layer_of(module: str, table: dict[str, int]) -> int:
    """The layer of ``memstack.x…`` (the package face ``memstack`` is ``__init__``)."""
    top = module.split(".")[1] if "." in module else "__init__"
    if top not in table:
        raise AssertionError(f"{module}: its folder {top!r} is in no layer of LAYERS")
    return table[top]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_sits_in_a_layer_folder() -> None:
    """Nothing loose at the top but the face: every other module lives in a layer's package."""
    table = layers()
    tops = {m.split(".")[1] if "." in m else "__init__" for m in modules()}
    assert tops <= set(table), f"modules in no layer: {sorted(tops - set(table))}"
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.stem not in FACE)
    assert loose == [], f"loose modules at the top of src/memstack: {loose}"
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert folders == sorted(set(table) - set(FACE)), folders


def test_no_import_circle() -> None:
    assert cycles(graph()) == []


def test_nothing_imports_a_higher_layer() -> None:
    table = layers()
    upward = [
        f"{a} (layer {layer_of(a, table)}) imports {b} (layer {layer_of(b, table)})"
        for a, targets in sorted(graph().items())
        for b in sorted(targets)
        if layer_of(b, table) > layer_of(a, table)
    ]
    assert upward == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("from .b import x\n", "circle"),
        ("def f():\n    from .b import x\n", "circle"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import x\n", "circle"),
    ],
)
def test_the_check_sees_every_kind_of_import(tmp_path: Path, source: str, problem: str) -> None:
    """A circle made of a top-level import, a function-level one or a type-checking one is found."""
    package = tmp_path / "memstack"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(source)
    (package / "b.py").write_text("from .a import y\n")
    known = {"memstack", "memstack.a", "memstack.b"}
    edges = {}
    for name in ("memstack.a", "memstack.b"):
        path = package / f"{name.split('.')[1]}.py"
        tree = ast.parse(path.read_text())
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        edges[name] = {t for n in nodes for t in _imported(name, path, n, known) if t != name}
    assert cycles(edges) == [["memstack.a", "memstack.b"]], problem
