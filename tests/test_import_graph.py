"""The layers import one way (pytest_export -> exportdb -> exportcore) and no module imports itself round a cycle.

Inside each package the folders are layers too, declared below (LAYERS), bottom to top: a place
(a folder, a deeper folder listed on its own, or a top-level module) imports only places of lower
layers, so no two folders import in a circle. Every folder of pytest_export/ and exportcore/ has its
place; a new folder must be given one. The top-level modules of a package not listed by name are
the package's own place (pytest_export's hooks; exportcore's package module). results, rendering
and cli import no pytest.

Every import counts, wherever it stands: module level, inside a function (a "lazy" import only
hides a cycle until the day both ends load in the other order), under ``if TYPE_CHECKING:``, and
``importlib.import_module("literal")``. Read from the source with ``ast``, so nothing is imported.
"""

from __future__ import annotations

import ast
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: A package may import only packages of its own rank or lower.
RANK = {"pytest_export": 2, "exportdb": 1, "exportcore": 0}

#: Each package's places, bottom to top, one tuple per layer. A place imports only places of its own
#: layer or lower ones, and never round a circle; a module belongs to its longest place.
LAYERS: dict[str, list[tuple[str, ...]]] = {
    "pytest_export": [
        ("pytest_export.results",),  # the data: records, report, gate, baseline, merge, journal
        ("pytest_export.rendering",),  # results as text
        ("pytest_export.ledger",),  # one record per (model, mode, torch version); its pages and drift
        ("pytest_export.cli",),  # python -m pytest_export SUBCOMMAND
        # the session's words: options, the marker, stash keys, hooks' specs, limits, the cache's place
        ("pytest_export.options", "pytest_export.marker", "pytest_export.session_state", "pytest_export.hookspecs",
         "pytest_export.finding_warnings", "pytest_export.time_limits", "pytest_export.torch_logs",
         "pytest_export.cache_dir", "pytest_export.cache_audit", "pytest_export.case_seed", "pytest_export.repeat"),
        ("pytest_export.reporting",),  # a session's outputs, and a test's records on its TestReport
        ("pytest_export.distributed",),  # xdist workers, scheduling, threads, shards
        # one test's way to its record
        ("pytest_export.settle",),
        ("pytest_export.runner",),
        ("pytest_export.fixtures", "pytest_export.parametrize", "pytest_export.dim_errors"),
        ("pytest_export.unittest", "pytest_export.zoo"),
        ("pytest_export",),  # the hooks (plugin), the package, __main__
    ],
    "exportcore": [
        # the engine's words
        ("exportcore.vocab",), ("exportcore.codec",), ("exportcore.outcome",),
        ("exportcore.case", "exportcore.clock", "exportcore.devices", "exportcore.input_budget"),
        ("exportcore.compare",),  # output trees leaf by leaf
        ("exportcore.sandbox",),  # snapshot and restore of global and model state
        ("exportcore.diagnosis",),  # a failure's category, hint, source, link (categories/ inside)
        ("exportcore.shapes",),  # the parsed spec, drawn and out-of-spec shapes
        ("exportcore.guards",),
        ("exportcore.targets",),  # the adapters (no stage, no check)
        ("exportcore.columns",),  # a result's column: a mode or a target, on a device
        ("exportcore.modes",),
        ("exportcore.reuse",),  # the proof and the stores
        ("exportcore.programs",),  # the programs under test, run and compared with eager
        ("exportcore.context",),  # the Run the steps share
        ("exportcore.stages",),
        ("exportcore.checks",),
        ("exportcore.diagnosis.explain",),  # a failing case's verified fix
        ("exportcore.pipeline",),
        ("exportcore.check",),
        ("exportcore.zoo",),  # model families built on the engine
        ("exportcore",),  # the package: its public names
    ],
}

#: Imports against LAYERS that the code still has, each with the work that removes it. The test fails
#: when one is gone (take it off the list) as when a new one appears.
CROSSINGS: dict[tuple[str, str], str] = {}

#: The folders that import no pytest (the glue alone talks to pytest).
NO_PYTEST = ("pytest_export.results", "pytest_export.rendering", "pytest_export.cli")
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


def place_of(module: str, places: Sequence[str]) -> str | None:
    """Return the longest of ``places`` holding ``module`` (the place itself, or a module inside it), or None."""
    return max((p for p in places if module == p or module.startswith(p + ".")), key=len, default=None)


def place_edges(edges: list[Edge], layers: Sequence[tuple[str, ...]]) -> list[Edge]:
    """Return the imports between the places of ``layers``: one Edge per (place, place), at its first import."""
    places = [place for layer in layers for place in layer]
    between: dict[tuple[str, str], Edge] = {}
    for edge in edges:
        source, target = place_of(edge.source, places), place_of(edge.target, places)
        if source is not None and target is not None and source != target:
            between.setdefault((source, target), Edge(source, target, edge.where))
    return sorted(between.values(), key=lambda e: (e.source, e.target))


def folder_problems(edges: list[Edge], layers: Sequence[tuple[str, ...]],
                    crossings: dict[tuple[str, str], str] | None = None) -> list[str]:
    """Return one line per loop between places and per import of a place in a higher layer.

    ``layers``: the places bottom to top, one tuple per layer; ``crossings``: imports against them still
    allowed, each with the work that removes it (they are left out of the loops too).
    """
    rank = {place: i for i, layer in enumerate(layers) for place in layer}
    allowed = crossings or {}
    between = [e for e in place_edges(edges, layers) if (e.source, e.target) not in allowed]
    lines = []
    for cycle in find_cycles(between):
        walk = " -> ".join([cycle[0].source] + [e.target for e in cycle])
        lines.append(f"folder loop: {walk} (at {', '.join(e.where for e in cycle)})")
    for edge in between:
        if rank[edge.target] > rank[edge.source]:
            lines.append(f"folder import against the layers: {edge.source} -> {edge.target} at {edge.where} "
                         f"({edge.target} is layer {rank[edge.target]}, {edge.source} layer {rank[edge.source]})")
    return lines


def unplaced_folders(root: Path, layers: Sequence[tuple[str, ...]]) -> list[str]:
    """Return the package's folders (any with an ``__init__.py`` right under a place's folder) no place names."""
    places = {place for layer in layers for place in layer}
    packages = sorted({p.split(".")[0] for p in places})
    found = []
    for package in packages:
        for init in sorted((root / package).glob("*/__init__.py")):
            folder = ".".join(init.parent.relative_to(root).parts)
            if folder not in places:
                found.append(folder)
    return found


def foreign_imports(root: Path, folders: Sequence[str], names: tuple[str, ...]) -> list[str]:
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


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_the_folders_import_one_way(package):
    problems = folder_problems(import_edges(ROOT, tuple(RANK)), LAYERS[package], CROSSINGS)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_every_folder_has_its_place_in_the_layers(package):
    assert not unplaced_folders(ROOT, LAYERS[package])
    modules = module_files(ROOT, (package,))
    places = [place for layer in LAYERS[package] for place in layer]
    assert [p for p in places if p not in modules] == []  # each place is a module or a folder that exists
    assert len(places) == len(set(places))


def test_each_allowed_crossing_still_exists():
    # A crossing the code no longer has comes off CROSSINGS, so it cannot come back unnoticed.
    between = {(e.source, e.target) for layers in LAYERS.values()
               for e in place_edges(import_edges(ROOT, tuple(RANK)), layers)}
    assert sorted(set(CROSSINGS) - between) == []


def test_results_rendering_and_the_cli_import_no_pytest():
    problems = foreign_imports(ROOT, NO_PYTEST, NOT_BELOW_GLUE)
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
    for folder in NO_PYTEST:
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
    layers = [("top.results",), ("top.rendering",), ("top",)]
    assert folder_problems(edges, layers) == [
        "folder loop: top.rendering -> top.results -> top.rendering (at top/rendering/page.py:1, top/results/data.py:2)",
        "folder import against the layers: top.results -> top.rendering at top/results/data.py:2 "
        "(top.rendering is layer 1, top.results layer 0)",
    ]
    assert folder_problems(edges, [("top.rendering",), ("top.results",), ("top",)])[0].startswith("folder loop: ")
    # two folders of one layer may import each other, never round a circle; an allowed crossing is no loop
    assert folder_problems(edges, [("top.results", "top.rendering"), ("top",)])[0].startswith("folder loop: ")
    assert folder_problems(edges, layers, {("top.results", "top.rendering"): "being moved"}) == []


def test_a_folder_nobody_placed_is_named(tmp_path):
    root = _package(tmp_path, {"top/__init__.py": "", "top/results/__init__.py": "", "top/new/__init__.py": "",
                               "top/new/deep/__init__.py": ""})
    assert unplaced_folders(root, [("top.results",), ("top",)]) == ["top.new"]


@pytest.mark.parametrize("importer, imported", [
    ("pytest_export/reporting/junit.py", "pytest_export.distributed.sharding"),  # the loop issue 52 cut
    ("exportcore/programs/parity.py", "exportcore.stages.capture"),
    ("exportcore/sandbox/heap.py", "exportcore.stages.capture"),
])
def test_a_loop_planted_in_a_copy_of_the_project_fails_the_layers(tmp_path, importer, imported):
    # The project's own LAYERS on a copy of its sources, one lazy import planted against them.
    package = importer.split("/")[0]
    shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "*.j2"))
    before = folder_problems(import_edges(tmp_path, (package,)), LAYERS[package], CROSSINGS)
    with open(tmp_path / importer, "a", encoding="utf-8") as out:
        out.write(f"\n\ndef _planted():\n    import {imported}\n")
    after = folder_problems(import_edges(tmp_path, (package,)), LAYERS[package], CROSSINGS)
    new = [line for line in after if line not in before]
    source, target = (place_of(m, [p for layer in LAYERS[package] for p in layer])
                      for m in (importer[:-3].replace("/", "."), imported))
    assert any(line.startswith("folder loop: ") and source in line and target in line for line in new), new
    assert any(line.startswith(f"folder import against the layers: {source} -> {target} ") for line in new), new


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
    layers = [("top.results",), ("top.cli",), ("top",)]
    assert folder_problems(import_edges(root, ("top",)), layers) == [
        "folder loop: top -> top.results -> top (at top/glue.py:2, top/results/names.py:1)",
        "folder import against the layers: top.results -> top at top/results/names.py:1 "
        "(top is layer 2, top.results layer 0)",
    ]
    assert foreign_imports(root, ("top.results", "top.cli"), ("pytest", "_pytest")) == [
        "top.cli.run imports pytest at top/cli/run.py:2",
        "top.results.data imports _pytest at top/results/data.py:3",
    ]
