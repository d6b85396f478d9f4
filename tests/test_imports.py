"""The package's import graph: every module imports, and no module-level cycle.

Edges are read from the source (``ast``), not from ``sys.modules``, so the
test sees every module whatever was imported before it. An edge is an import
executed when the module loads: statements at module level, in class bodies,
and in module-level ``if``/``try``/``with`` blocks. Imports inside functions
(the lazy ``import dppca.plotting`` behind ``result.plot()``, optional
extras) and under ``if TYPE_CHECKING:`` run later or never, so they are not
edges. Loading a submodule also runs its parent packages' ``__init__``;
that implicit step is not an edge either, or every package would form a
cycle with its own modules. A second check adds the imports inside
functions: none may close a loop either (a result's ``plot()`` asks the
drawer registry of :mod:`dppca.releases.protocol`, which the plotting package fills).
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
from pathlib import Path

import pytest

import dppca

PACKAGE = "dppca"
ROOT = Path(dppca.__file__).resolve().parent

# ``python -m dppca`` and ``python -m dppca.cli`` run the command on import.
RUN_ON_IMPORT = {"dppca.__main__", "dppca.cli.__main__"}


def _modules() -> dict[str, Path]:
    found = {PACKAGE: ROOT / "__init__.py"}
    for info in pkgutil.walk_packages([str(ROOT)], prefix=f"{PACKAGE}."):
        relative = Path(*info.name.split(".")[1:])
        path = ROOT / relative / "__init__.py" if info.ispkg else ROOT / f"{relative}.py"
        found[info.name] = path
    return found


MODULES = _modules()


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per run: the graphs below only read
    it, and parsing the whole package for every test was most of this file's
    time."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _load_time_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run when a module loads (not in functions, not TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                found += _load_time_imports(node.body)
            found += _load_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                found += _load_time_imports(block)
            for handler in node.handlers:
                found += _load_time_imports(handler.body)
        elif isinstance(node, ast.With | ast.ClassDef):
            found += _load_time_imports(node.body)
    return found


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The dppca modules an import statement loads, by their dotted names."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
        return {name for name in names if name.split(".")[0] == PACKAGE}
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1])
        source = f"{base}.{node.module}" if node.module else base
    else:
        source = node.module or ""
    if source.split(".")[0] != PACKAGE:
        return set()
    targets = set()
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        targets.add(submodule if submodule in MODULES else source)
    return targets


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = _tree(path)
        edges: set[str] = set()
        for node in _load_time_imports(tree.body):
            edges |= _targets(module, node)
        edges.discard(module)
        graph[module] = {target for target in edges if target in MODULES}
    return graph


class _DeferredImports(ast.NodeVisitor):
    """Imports inside functions."""

    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []
        self.functions: list[str] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
        else:
            for child in node.orelse:
                self.visit(child)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if self.functions:
            self.found.append(node)

    visit_Import = _import
    visit_ImportFrom = _import


def deferred_graph() -> dict[str, set[str]]:
    """The import graph plus imports inside functions."""
    graph = import_graph()
    for module, path in MODULES.items():
        visitor = _DeferredImports()
        visitor.visit(_tree(path))
        for node in visitor.found:
            graph[module] |= {t for t in _targets(module, node) if t in MODULES and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_module_list_covers_the_package():
    # Guards the walk itself: a few modules from each layer must be present.
    for name in ("dppca", "dppca.kernels.kendall", "dppca.plotting.loading", "dppca.cli._common"):
        assert name in MODULES


@pytest.mark.parametrize("module", sorted(set(MODULES) - RUN_ON_IMPORT))
def test_every_module_imports(module):
    importlib.import_module(module)


def test_the_graph_sees_known_edges():
    graph = import_graph()
    assert "dppca.core.exceptions" in graph["dppca"]  # from .core.exceptions import ...
    assert "dppca.kernels.kendall" not in graph["dppca"]  # public names load on first use
    assert "dppca.cli._safety" in graph["dppca.cli"]  # from . import _safety
    assert "dppca.plotting" not in graph["dppca.releases.loading"]


def test_cycle_finder_reports_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_at_module_level():
    found = cycles(import_graph())
    assert not found, "module-level import cycles: " + "; ".join(
        " <-> ".join(component) for component in found
    )


def test_deferred_imports_close_no_loop():
    # An import inside a function that closes a loop hides a dependency that
    # should point the other way (results -> plotting) or be a module of its own.
    found = cycles(deferred_graph())
    assert not found, "import loops through deferred imports: " + "; ".join(
        " <-> ".join(component) for component in found
    )


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += sorted(graph[module])
    return seen


@pytest.mark.parametrize(
    "kernel", ["dppca.kernels.kendall", "dppca.kernels.exact_pairs", "dppca.kernels.pairsums"]
)
def test_the_kernels_reach_no_noise_module(kernel):
    # The kernels are deterministic: a pairing order is passed in, never drawn.
    reached = _reachable(deferred_graph(), kernel)
    assert not reached & {
        "dppca.privacy.mechanisms",
        "dppca.privacy.knorm",
        "dppca.privacy.quantiles",
    }


@pytest.mark.parametrize(
    "module",
    [
        "dppca.releases.directions.result",
        "dppca.releases.loading.result",
        "dppca.releases.scree.result",
        "dppca.releases.score.result",
    ],
)
def test_results_import_no_plotting_and_no_other_release(module):
    reached = _reachable(deferred_graph(), module)
    assert not {m for m in reached if m.startswith("dppca.plotting")}
    assert "dppca.releases.loading" not in reached or module == "dppca.releases.loading.result"


# The layers of the pipeline, bottom first (CONTRIBUTING.md, "Architecture"):
# a module imports only from its own layer or the layers below it.
LAYERS = {
    "core": 0,
    "kernels": 1,
    "privacy": 2,
    "datasets": 2,  # bundled public tables: the ledger knows them as practice data
    "releases": 3,
    "plotting": 4,
    "reporting": 4,
    "report_page": 4,
    "release_io": 4,
    "_release_codec": 4,
    "_release_document": 4,
    "_csv": 4,
    "cli": 5,
    "app": 5,
    "sklearn": 5,
    "_kinds": 5,  # the registry of release kinds that the CLI and the app read
}


def layer(module: str) -> int:
    """The layer of a dppca module: its first name below ``dppca`` (the package itself: top)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in {"__main__"}:
        return max(LAYERS.values()) + 1
    if parts[1] == "_version":
        return 0
    return LAYERS[parts[1]]


def test_every_top_level_entry_has_a_layer():
    names = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    assert names - {"__main__", "_version"} <= set(LAYERS), names - set(LAYERS)


def test_imports_point_down_the_pipeline():
    upward = sorted(
        (source, target)
        for source, targets in deferred_graph().items()
        for target in targets
        if layer(target) > layer(source)
    )
    assert upward == [], upward


def test_layer_check_can_fail():
    assert layer("dppca.cli.app") > layer("dppca.kernels.kendall")


class _TypeCheckingImports(ast.NodeVisitor):
    """Imports under ``if TYPE_CHECKING:`` (at any depth)."""

    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self.found += [n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
        self.generic_visit(node)


def typing_graph() -> dict[str, set[str]]:
    """Every import: load time, inside functions and under ``if TYPE_CHECKING:``."""
    graph = deferred_graph()
    for module, path in MODULES.items():
        visitor = _TypeCheckingImports()
        visitor.visit(_tree(path))
        for node in visitor.found:
            graph[module] |= {t for t in _targets(module, node) if t in MODULES and t != module}
    return graph


def test_no_cycle_even_through_type_annotations():
    # Issue 20: no import circle, lazy ones included. An import needed only by
    # the type checker still couples two modules, so it may not close a loop.
    assert cycles(typing_graph()) == []


def test_the_typing_graph_sees_type_checking_imports():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .engine import X\n"
    visitor = _TypeCheckingImports()
    visitor.visit(ast.parse(source))
    assert [n.module for n in visitor.found] == ["engine"]
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
