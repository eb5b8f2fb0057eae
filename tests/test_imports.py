"""The package's own imports form no circle, the records stay a leaf, and ``import ariadne_lc`` stays light.

The import graph is built from the source with :mod:`ast`: every ``import`` counts, at module level, inside
functions (lazy) and under ``TYPE_CHECKING``, because each of them is a dependency a reader must follow and
a lazy one only hides a circle until the day it runs first. Importing ``a.b.c`` also runs the packages
``a.b``'s ``__init__``; that edge counts too, except to the importing module's own ancestors (already
running by the time it is imported) and to the root ``ariadne_lc`` (the same). An explicit import *of*
the root (``import ariadne_lc``, ``from ariadne_lc import Auditor``) counts like any other.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import ariadne_lc

ROOT = "ariadne_lc"
PACKAGE_DIR = Path(ariadne_lc.__file__).parent


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _ancestors(name: str) -> Iterator[str]:
    parts = name.split(".")
    for i in range(1, len(parts)):
        yield ".".join(parts[:i])


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> set[str]:
    """The package's modules that one import statement makes Python run (see the module docstring)."""
    named: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            named.add(alias.name)
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        for alias in node.names:
            child = f"{source}.{alias.name}"
            named.add(child if child in modules else source)
    out: set[str] = set()
    own = {*_ancestors(module), module}
    for name in named:
        if name != ROOT and not name.startswith(ROOT + "."):
            continue
        while name not in modules and "." in name:  # ``import ariadne_lc.x.Name``-style paths
            name = name.rsplit(".", 1)[0]
        out.add(name)
        out.update(a for a in _ancestors(name) if a != ROOT and a not in own)
    out.discard(module)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _targets(name, path.name == "__init__.py", node, modules)
        graph[name] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One concrete circle (``a -> b -> ... -> a``) per strongly connected component (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(graph, c) for c in components]


def _circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle through {start} in {sorted(component)}")  # pragma: no cover


def test_the_package_imports_form_no_circle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_circle_and_prints_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"], ["e", "e2", "e"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_lazy_and_type_checking_imports_count() -> None:
    modules = {"ariadne_lc": Path(), "ariadne_lc.x": Path(), "ariadne_lc.y": Path(), "ariadne_lc.pkg": Path()}
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ariadne_lc.y import Thing\n"
        "def f():\n    import ariadne_lc.pkg.z\n"
        "from ariadne_lc import __version__\n"
    )
    edges: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            edges |= _targets("ariadne_lc.x", False, node, modules)
    assert edges == {"ariadne_lc.y", "ariadne_lc.pkg", "ariadne_lc"}


def test_records_are_a_leaf() -> None:
    """The records layer imports nothing above it (trace, records, the link registry, semconv, errors, _version)."""
    graph = import_graph()
    leaf = {
        "ariadne_lc.trace",
        "ariadne_lc.links",
        "ariadne_lc.records",
        "ariadne_lc._result",
        "ariadne_lc._evidence",
        "ariadne_lc.semconv",
        "ariadne_lc.errors",
        "ariadne_lc._version",
    }
    for name in leaf:
        assert graph[name] <= leaf, (name, sorted(graph[name] - leaf))


def test_import_ariadne_lc_loads_no_heavy_dependency() -> None:
    heavy = ["scipy", "numpy", "typer", "rich", "langchain_openai", "torch", "matplotlib"]
    code = f"import sys, ariadne_lc; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_statistics_import_scipy_when_they_compute() -> None:
    code = (
        "import sys\n"
        "from ariadne_lc.stats import wilson_interval\n"
        "assert 'scipy' not in sys.modules\n"
        "print(wilson_interval(3, 4) is not None, 'scipy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"], out.stdout + out.stderr
