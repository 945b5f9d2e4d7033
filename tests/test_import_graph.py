"""The layers import one way (pytest_export -> exportdb -> exportcore) and no module imports itself round a cycle.

Inside pytest_export the folders are layers too: results (data) <- rendering (text) <- cli (the
commands) <- the pytest glue (every other module: the top level, reporting/, distributed/, zoo/).
A folder imports only folders below it, so none loops back, and results, rendering and cli import no pytest.

Every import counts, wherever it stands: module level, inside a function (a "lazy" import only
hides a cycle until the day both ends load in the other order), under ``if TYPE_CHECKING:``, and
``importlib.import_module("literal")``. Read from the source with ``ast``, so nothing is imported.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A package may import only packages of its own rank or lower.
RANK = {"pytest_export": 2, "exportdb": 1, "exportcore": 0}
#: pytest_export's layered folders, lowest first; the rest of the package is its glue, above them all.
FOLDERS = {"pytest_export.results": 0, "pytest_export.rendering": 1, "pytest_export.cli": 2}
#: What the layered folders never import (the glue alone talks to pytest).
NOT_BELOW_GLUE = ("pytest", "_pytest")


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target``, at ``where`` (file:line)."""

    source: str
    target: str
    where: str


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Return dotted module name -> file for every .py file of ``packages`` under ``root``."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imported_names(module: str, is_package: bool, node: ast.AST) -> list[str]:
    """Return the dotted names an import node may load (a ``from`` import's names may be submodules)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = package[: len(package) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        return [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
    if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
                 or isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))):
        return [node.args[0].value]
    return []


def import_edges(root: Path, packages: tuple[str, ...]) -> list[Edge]:
    """Return every import between modules of ``packages``, one Edge per (source, target) at its first line.

    Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so each package on the way is
    a target too, except the importer's own enclosing packages (already loading when it runs).
    """
    modules = module_files(root, packages)
    edges: dict[tuple[str, str], Edge] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0)):
            for name in _imported_names(module, path.name == "__init__.py", node):
                parts = name.split(".")
                for i in range(1, len(parts) + 1):
                    target = ".".join(parts[:i])
                    if target not in modules or target == module or module.startswith(target + "."):
                        continue
                    where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
                    edges.setdefault((module, target), Edge(module, target, where))
    return sorted(edges.values(), key=lambda e: (e.source, e.target))


def find_cycles(edges: list[Edge]) -> list[list[Edge]]:
    """Return one cycle per group of modules that import each other: the shortest through its first module."""
    graph: dict[str, list[Edge]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge)
    cycles = []
    for group in _strongly_connected(graph):
        start = min(group)
        came_by: dict[str, Edge] = {}
        frontier = [start]
        while start not in came_by:  # breadth first inside the group until back at the start
            reached = []
            for node in frontier:
                for edge in graph.get(node, ()):
                    if edge.target in group and edge.target not in came_by:
                        came_by[edge.target] = edge
                        reached.append(edge.target)
            frontier = reached
        cycle = [came_by[start]]
        while cycle[0].source != start:
            cycle.insert(0, came_by[cycle[0].source])
        cycles.append(cycle)
    return cycles


def _strongly_connected(graph: dict[str, list[Edge]]) -> list[set[str]]:
    """Return the groups of more than one module that all reach each other (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for edge in graph.get(node, ()):
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups, key=min)


def wrong_way(edges: list[Edge], rank: dict[str, int]) -> list[Edge]:
    """Return the imports from a lower layer into a higher one."""
    return [e for e in edges if rank[e.target.split(".")[0]] > rank[e.source.split(".")[0]]]


def layering_problems(root: Path, rank: dict[str, int]) -> list[str]:
    """Return one line per import cycle and per wrong-way import of the ranked packages under ``root``."""
    edges = import_edges(root, tuple(rank))
    lines = []
    for cycle in find_cycles(edges):
        walk = " -> ".join([cycle[0].source] + [e.target for e in cycle])
        lines.append(f"import cycle: {walk} (at {', '.join(e.where for e in cycle)})")
    for edge in wrong_way(edges, rank):
        lines.append(f"wrong-way import: {edge.source} -> {edge.target} at {edge.where} "
                     f"(layers: {' -> '.join(sorted(rank, key=rank.__getitem__, reverse=True))})")
    return lines


def folder_of(module: str, folders: dict[str, int], package: str) -> str:
    """Return the layered folder holding ``module``, or ``package`` (its glue) when none does."""
    return max((f for f in folders if module == f or module.startswith(f + ".")), key=len, default=package)


def folder_problems(edges: list[Edge], folders: dict[str, int], package: str) -> list[str]:
    """Return one line per loop between ``package``'s folders and per import into a higher folder.

    ``folders`` ranks the layered folders; every other module of ``package`` is its glue, ranked
    above them all. A folder imports only folders of lower rank, so folders cannot import in a circle.
    """
    rank = {**folders, package: max(folders.values(), default=-1) + 1}
    inside = [e for e in edges if all(m == package or m.startswith(package + ".") for m in (e.source, e.target))]
    between: dict[tuple[str, str], Edge] = {}
    for edge in inside:
        source, target = folder_of(edge.source, folders, package), folder_of(edge.target, folders, package)
        if source != target:
            between.setdefault((source, target), Edge(source, target, edge.where))
    folder_edges = sorted(between.values(), key=lambda e: (e.source, e.target))
    lines = []
    for cycle in find_cycles(folder_edges):
        walk = " -> ".join([cycle[0].source] + [e.target for e in cycle])
        lines.append(f"folder loop: {walk} (at {', '.join(e.where for e in cycle)})")
    order = " <- ".join(sorted(rank, key=rank.__getitem__))
    for edge in folder_edges:
        if rank[edge.target] > rank[edge.source]:
            lines.append(f"folder import against the layers: {edge.source} -> {edge.target} at {edge.where} "
                         f"(folders: {order})")
    return lines


def foreign_imports(root: Path, folders: dict[str, int], names: tuple[str, ...]) -> list[str]:
    """Return one line per import of a package in ``names`` (or its submodules) by a module of ``folders``."""
    packages = tuple(sorted({f.split(".")[0] for f in folders}))
    lines = []
    for module, path in module_files(root, packages).items():
        if not any(module == f or module.startswith(f + ".") for f in folders):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0)):
            hits = sorted({n.split(".")[0] for n in _imported_names(module, path.name == "__init__.py", node)}
                          & set(names))
            lines += [f"{module} imports {name} at {path.relative_to(root)}:{node.lineno}" for name in hits]
    return lines


# -- the project ----------------------------------------------------------------------------


def test_the_packages_import_one_way_without_cycles():
    problems = layering_problems(ROOT, RANK)
    assert not problems, "\n".join(problems)


def test_the_folders_of_pytest_export_import_one_way():
    problems = folder_problems(import_edges(ROOT, tuple(RANK)), FOLDERS, "pytest_export")
    assert not problems, "\n".join(problems)


def test_results_rendering_and_the_cli_import_no_pytest():
    problems = foreign_imports(ROOT, FOLDERS, NOT_BELOW_GLUE)
    assert not problems, "\n".join(problems)


def test_the_target_adapters_import_no_stage_or_check():
    # exportcore/targets/ probes, lowers, loads and judges a rejection; the pipeline's stages, its
    # checks and the programs under test (exportcore.stages.runtime, exportcore.programs.under_test) drive them,
    # never the other way.
    driving = ("exportcore.stages", "exportcore.checks", "exportcore.pipeline", "exportcore.check",
               "exportcore.programs.under_test")
    wrong = [f"{e.source} imports {e.target} at {e.where}" for e in import_edges(ROOT, tuple(RANK))
             if e.source.startswith("exportcore.targets")
             and any(e.target == d or e.target.startswith(d + ".") for d in driving)]
    assert not wrong, "\n".join(wrong)
    assert any(e.source == "exportcore.stages.runtime" and e.target.startswith("exportcore.targets")
               for e in import_edges(ROOT, tuple(RANK)))  # the edge exists, one way


def test_pytest_export_shows_its_layers():
    top = sorted(p.name for p in (ROOT / "pytest_export").glob("*.py"))
    assert len(top) <= 20, top
    for folder in FOLDERS:
        assert (ROOT / folder.replace(".", "/") / "__init__.py").is_file(), folder


def test_every_module_of_the_three_packages_is_read():
    modules = module_files(ROOT, tuple(RANK))
    sources = {e.source for e in import_edges(ROOT, tuple(RANK))}
    assert {"exportcore.check", "exportdb.registry", "exportdb.conftest", "pytest_export.plugin"} <= set(modules)
    assert {m.split(".")[0] for m in sources} == set(RANK)


# -- the checker itself, on throwaway packages ------------------------------------------------


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_a_cycle_hidden_in_a_function_is_found_with_its_path(tmp_path):
    root = _package(tmp_path, {
        "low/__init__.py": "",
        "low/a.py": "from low.b import B\n",
        "low/b.py": "def f():\n    from . import c\n",
        "low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from low.a import A\n",
        "low/d.py": "import low.a\n",  # leads into the cycle without being part of it
    })
    problems = layering_problems(root, {"low": 0})
    assert len(problems) == 1, problems
    assert problems[0].startswith("import cycle: low.a -> low.b -> low.c -> low.a (at low/a.py:1, low/b.py:2, low/c.py:3)")


def test_an_import_against_the_layers_is_named():
    rank = {"top": 1, "low": 0}
    edges = [Edge("top.x", "low.y", "top/x.py:1"), Edge("low.y", "top.z", "low/y.py:7")]
    assert wrong_way(edges, rank) == [edges[1]]


def test_relative_and_dynamic_imports_resolve_to_modules(tmp_path):
    root = _package(tmp_path, {
        "low/__init__.py": "from .sub import thing\n",
        "low/sub/__init__.py": "thing = 1\n",
        "low/sub/m.py": "from .. import other\nfrom ..sub import leaf\n",
        "low/sub/leaf.py": "",
        "low/other.py": "import importlib\n\ndef late():\n    return importlib.import_module('top.api')\n",
        "top/__init__.py": "",
        "top/api.py": "",
    })
    edges = {(e.source, e.target) for e in import_edges(root, ("low", "top"))}
    assert edges == {
        ("low", "low.sub"), ("low.sub.m", "low.other"), ("low.sub.m", "low.sub.leaf"),
        ("low.other", "top"), ("low.other", "top.api"),
    }
    assert [p.split(" at ")[0] for p in layering_problems(root, {"top": 1, "low": 0})] == [
        "wrong-way import: low.other -> top", "wrong-way import: low.other -> top.api",
    ]



def test_a_loop_between_two_folders_is_found(tmp_path):
    root = _package(tmp_path, {
        "top/__init__.py": "",
        "top/glue.py": "from top.rendering.page import page\n",
        "top/results/__init__.py": "",
        "top/results/data.py": "def late():\n    from top.rendering import style\n",  # lazy: still a loop
        "top/rendering/__init__.py": "",
        "top/rendering/style.py": "",
        "top/rendering/page.py": "from top.results.data import late\n",
    })
    edges = import_edges(root, ("top",))
    assert not find_cycles(edges)  # no module imports itself round a cycle: only the folders loop
    assert folder_problems(edges, {"top.results": 0, "top.rendering": 1}, "top") == [
        "folder loop: top.rendering -> top.results -> top.rendering (at top/rendering/page.py:1, top/results/data.py:2)",
        "folder import against the layers: top.results -> top.rendering at top/results/data.py:2 "
        "(folders: top.results <- top.rendering <- top)",
    ]
    assert folder_problems(edges, {"top.rendering": 0, "top.results": 1}, "top")[0].startswith("folder loop: ")


def test_a_folder_importing_the_glue_or_pytest_is_named(tmp_path):
    root = _package(tmp_path, {
        "top/__init__.py": "",
        "top/glue.py": "import pytest\nfrom top.results import data\n",  # the glue may do both
        "top/results/__init__.py": "",
        "top/results/data.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from _pytest.nodes import Item\n",
        "top/results/names.py": "from .. import glue\n",
        "top/cli/__init__.py": "",
        "top/cli/run.py": "def main():\n    import pytest.main_helpers\n",
    })
    folders = {"top.results": 0, "top.cli": 1}
    assert folder_problems(import_edges(root, ("top",)), folders, "top") == [
        "folder loop: top -> top.results -> top (at top/glue.py:2, top/results/names.py:1)",
        "folder import against the layers: top.results -> top at top/results/names.py:1 "
        "(folders: top.results <- top.cli <- top)",
    ]
    assert foreign_imports(root, folders, ("pytest", "_pytest")) == [
        "top.cli.run imports pytest at top/cli/run.py:2",
        "top.results.data imports _pytest at top/results/data.py:3",
    ]
