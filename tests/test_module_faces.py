"""Every name is imported from the module that defines it.

Only the package faces, ``dppca`` and ``dppca.plotting`` (and the ledger's
documented module, ``dppca.privacy.ledger``), gather names from other modules;
everything else, in the package, its tests and benchmarks, imports a name from
its owner. So a module says what it defines and no more, and moving a name
means changing its importers, not adding a forwarding line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# the package's faces, and the ledger's, which docs/api.rst documents as a module
FACES = {"dppca", "dppca.plotting", "dppca.privacy.ledger"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}
FILES = sorted(
    [*SRC.rglob("*.py"), *(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
)


def _defined(tree: ast.Module) -> set[str]:
    """Names a module binds itself at top level (also under if/try)."""
    names: set[str] = set()
    for node in tree.body:
        for sub in [node, *ast.walk(node)] if isinstance(node, ast.If | ast.Try) else [node]:
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(sub.name)
            elif isinstance(sub, ast.Assign):
                names |= {
                    n.id for t in sub.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                }
            elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                names.add(sub.target.id)
    return names


DEFINED = {name: _defined(ast.parse(path.read_text())) for name, path in MODULES.items()}


def _target(path: Path, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    package = _module_name(path).split(".") if path.is_relative_to(SRC) else []
    if path.is_relative_to(SRC) and path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owned(module: str, name: str) -> bool:
    return name in DEFINED[module] or f"{module}.{name}" in MODULES


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_names_are_imported_from_the_module_that_defines_them(path):
    # catches a facade from the importer's side, underscore names included
    wrong = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = _target(path, node)
            if module in MODULES and module not in FACES:
                wrong += [
                    f"{a.name} from {module}" for a in node.names if not _owned(module, a.name)
                ]
    assert not wrong, f"import these from the module that defines them: {wrong}"


@pytest.mark.parametrize("module", sorted(set(MODULES) - FACES))
def test_no_module_but_the_faces_reexports(module):
    # from the module's side: __all__ lists its own names, no "name as name" aliases
    tree = ast.parse(MODULES[module].read_text())
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and "__all__" in ast.unparse(node)[:8]:
            value = node.value
            if isinstance(value, ast.List | ast.Tuple):
                exported += [e.value for e in value.elts if isinstance(e, ast.Constant)]
        if isinstance(node, ast.ImportFrom):
            assert not [a.name for a in node.names if a.asname == a.name], module
    foreign = [n for n in exported if not _owned(module, n)]
    assert not foreign, f"{module}.__all__ lists names it does not define: {foreign}"
