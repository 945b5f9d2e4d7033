"""The ExportDB registry: declarative cases, the tag taxonomy and expectations per mode.

A case is declared in ``exportdb/cases/<category>.py`` with the :func:`case` decorator on a
builder function. The builder imports torch itself, so importing the registry (and listing
the catalog) never imports torch.
"""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from exportcore.modes import MODES
from exportdb.expectations import PASS, Changed, Expectation, Fails, Pass, Skip, installed_torch, parse_version

__all__ = [
    "CATEGORIES", "MODES", "TAGS", "PASS", "Pass", "Fails", "Skip", "Changed", "Expectation", "ExportCase",
    "case", "all_cases", "get", "by_tag", "by_category", "validate", "installed_torch", "parse_version",
]


#: torch's own ExportDB tags, then ours for the pain points torch's catalog does not name.
TAGS: dict[str, str] = {
    "python.assert": "assert statements in forward",
    "python.builtin": "Python builtins (len, isinstance, id, getattr, ...)",
    "python.closure": "closures and functions captured from an enclosing scope",
    "python.context-manager": "with-statements in forward",
    "python.control-flow": "Python if/for/while in forward",
    "python.data-structure": "lists, dicts, tuples, sets built or indexed in forward",
    "python.object-model": "classes, properties, methods, module attributes",
    "python.standard-library": "math, functools, itertools, operator, ...",
    "torch.cond": "torch.cond: data-dependent branches captured as one graph",
    "torch.dynamic-shape": "symbolic sizes: Dim, derived dims, specialization",
    "torch.dynamic-value": "values only known at run time",
    "torch.escape-hatch": "torch._check, torch._check_is_size and other hints to the tracer",
    "torch.map": "torch.map over the leading dimension",
    "torch.mutation": "in-place updates of inputs, buffers and attributes",
    "torch.operator": "operators, custom ops and their fake kernels",
    "data-dependent": "shapes or branches that depend on tensor values (item, nonzero, ...)",
    "training": "train() behaviour: BatchNorm stats, Dropout, gradients",
    "pytree": "nested inputs and outputs: dicts, dataclasses, namedtuples",
    "custom-op": "ops defined with torch.library",
    "hooks": "forward hooks and pre-hooks on modules",
    "dtype": "dtype promotion and casts",
    "higher-order": "higher-order ops: while_loop, scan, map, cond",
    "specialization": "dims export turns into constants (0/1, Dim.AUTO, code that fixes a size)",
    "derived-dim": "dims defined from other dims (2*d, d+1)",
    "constraint-violation": "declared dynamic shapes that the code contradicts",
    "autograd-function": "torch.autograd.Function subclasses",
    "aliasing": "outputs that alias inputs or each other, views",
    "scalar-args": "int/float/bool/str arguments to forward",
    "kwargs": "keyword and keyword-only arguments",
    "module-attribute": "constants, attributes and submodules used in forward",
}

#: One module per category under exportdb/cases/, in the order the docs list them.
CATEGORIES = (
    "control_flow", "cond", "higher_order", "data_dependent", "dynamic_shapes", "constraints", "size_arithmetic",
    "mutation", "training", "custom_ops", "pytree", "arguments", "hooks", "object_model",
    "autograd", "dtype", "escapes", "builtins", "context_managers", "closures", "stdlib",
    "asserts", "data_structures", "operators",
)

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class ExportCase:
    """One catalog entry: a builder for (model, inputs, dynamic shapes) plus what torch does with it."""

    name: str
    category: str
    tags: tuple[str, ...]
    description: str
    expect: Mapping[str, Expectation]
    build: Callable[[], Any] = field(repr=False, compare=False)
    rewrite: str | None = None
    examples: int = 2
    #: Modes the case runs in; a mode is left out only where the case is meaningless there.
    modes: tuple[str, ...] = MODES
    #: Finding kinds (exportcore Finding.kind) a passing mode must report, e.g. "specialized".
    findings: tuple[str, ...] = ()
    #: The declarations as written, Changed(...) included; ``expect`` holds them resolved for
    #: the installed torch. None: the same as ``expect``.
    declared: Mapping[str, Any] | None = field(default=None, compare=False)

    def history(self, mode: str) -> str:
        """Return the expectation of ``mode`` across torch versions ("" when it never changed)."""
        exp = (self.declared or self.expect).get(mode)
        return str(exp) if isinstance(exp, Changed) else ""

    def since(self, mode: str) -> str:
        """Return the torch range the current expectation of ``mode`` holds for ("" when always)."""
        exp = (self.declared or self.expect).get(mode)
        return exp.since(installed_torch()) if isinstance(exp, Changed) else ""

    @property
    def supported(self) -> bool:
        """Return True when every mode passes."""
        return all(isinstance(self.expect[m], Pass) for m in self.modes)

    def skipped_modes(self) -> dict[str, str]:
        """Return mode -> reason for the modes that cannot run on the installed torch."""
        return {m: e.why for m in self.modes for e in [self.expect[m]] if isinstance(e, Skip)}

    def expect_on(self, version: tuple[int, int] | None) -> dict[str, Expectation]:
        """Return mode -> expectation on torch ``version`` (None: the newest, the catalog's reference)."""
        declared = self.declared or self.expect
        return {m: e.resolve(version) if isinstance(e, Changed) else e for m, e in declared.items()}

    def failing_modes(self) -> tuple[str, ...]:
        """Return the modes this case is expected to fail in."""
        return tuple(m for m in self.modes if isinstance(self.expect[m], Fails))

    def marker_expect(self) -> dict[str, dict[str, Any]]:
        """Return ``expect=`` for ``@pytest.mark.exportable``: expected failures with reason and category."""
        where = f"exportdb case {self.name} ({self.location()})"
        return {
            m: {"reason": f"{exp.why or exp}; {where}", "category": exp.category}
            for m in self.failing_modes()
            for exp in [self.expect[m]]
            if isinstance(exp, Fails)
        }

    def source(self) -> str:
        """Return the builder's source code, dedented, without the decorator."""
        lines = inspect.getsource(self.build).splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
        return textwrap.dedent("\n".join(lines[start:]))

    def location(self) -> str:
        """Return ``file:line`` where the case is declared (``exportdb/cases/<category>.py:N`` for ours)."""
        path = Path(inspect.getsourcefile(self.build) or "<unknown>")
        root = Path(__file__).resolve().parent.parent
        try:
            shown = path.resolve().relative_to(root).as_posix()
        except ValueError:
            shown = str(path)
        return f"{shown}:{inspect.getsourcelines(self.build)[1]}"

    def instantiate(self) -> Any:
        """Build and return an exportcore Case (imports torch)."""
        from exportcore.case import Case

        made = self.build()
        if isinstance(made, Case):
            made.name = made.name or self.name
            return made
        if not isinstance(made, tuple) or not 2 <= len(made) <= 4:
            raise TypeError(
                f"exportdb case {self.name!r}: builder must return Case or (model, args[, kwargs],"
                f" dynamic_shapes), got {type(made).__name__}"
            )
        model, args, *rest = made
        kwargs, ds = (None, rest[0]) if len(rest) == 1 else (rest + [None, None])[:2]
        return Case(model=model, args=args, kwargs=kwargs, dynamic_shapes=ds, name=self.name)


_REGISTRY: dict[str, ExportCase] = {}


def case(
    *,
    name: str,
    tags: tuple[str, ...],
    description: str,
    expect: Expectation | Changed | Mapping[str, Expectation | Changed] = PASS,
    rewrite: str | None = None,
    examples: int = 2,
    modes: tuple[str, ...] = MODES,
    findings: tuple[str, ...] = (),
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register the decorated builder as an ExportDB case; modes missing from ``expect`` pass.

    A mode whose outcome changed at a torch version declares ``Changed(before, at="2.12", after=...)``;
    the case is then checked against the expectation for the installed torch.
    """

    def register(build: Callable[[], Any]) -> Callable[[], Any]:
        category = build.__module__.rpartition(".")[2]
        _REGISTRY[name] = _make(name, category, tags, description, expect, rewrite, examples, modes, findings, build)
        return build

    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"exportdb case name must be snake_case, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"exportdb case name {name!r} is declared twice")
    return register


def _make(name: str, category: str, tags: Any, description: Any, expect: Any, rewrite: Any,
          examples: Any, modes: Any, findings: Any, build: Callable[[], Any]) -> ExportCase:
    where = f"exportdb case {name!r}"
    if not isinstance(modes, tuple) or not modes or any(m not in MODES for m in modes):
        raise ValueError(f"{where}: modes must be a non-empty tuple drawn from {MODES}, got {modes!r}")
    if not isinstance(tags, tuple) or not tags:
        raise TypeError(f"{where}: tags must be a non-empty tuple of str")
    unknown = [t for t in tags if t not in TAGS]
    if unknown:
        raise ValueError(f"{where}: unknown tag(s) {unknown}; known tags: {sorted(TAGS)}")
    if not isinstance(description, str) or len(description.strip()) < 20:
        raise ValueError(f"{where}: description must teach something (>= 20 characters)")
    if isinstance(expect, (Pass, Fails, Skip, Changed)):
        per_mode = {m: expect for m in MODES}
    elif isinstance(expect, Mapping):
        bad = [m for m in expect if m not in MODES]
        if bad:
            raise ValueError(f"{where}: expect names unknown mode(s) {bad}; modes are {MODES}")
        per_mode = {m: expect.get(m, PASS) for m in MODES}
    else:
        raise TypeError(f"{where}: expect must be PASS, Fails(...), Changed(...) or a {{mode: ...}} dict")
    for mode, exp in per_mode.items():
        if not isinstance(exp, (Pass, Fails, Skip, Changed)):
            raise TypeError(f"{where}: expect[{mode!r}] must be PASS, Fails(...), Skip(...) or Changed(...), "
                            f"got {exp!r}")
    declared = per_mode
    version = installed_torch()
    per_mode = {m: e.resolve(version) if isinstance(e, Changed) else e for m, e in declared.items()}
    skipped = [m for m, e in declared.items() if m not in modes and not isinstance(e, Pass)]
    if skipped:
        raise ValueError(f"{where}: expect names mode(s) {skipped} the case does not run in")
    failing = any(not isinstance(declared[m], Pass) for m in modes)  # in some torch version
    if failing and not rewrite:
        raise ValueError(f"{where}: a case that fails in some mode must name its rewrite case")
    if rewrite is not None and not isinstance(rewrite, str):
        raise TypeError(f"{where}: rewrite must be a case name (str)")
    if not isinstance(findings, tuple) or not all(isinstance(k, str) and k for k in findings):
        raise TypeError(f"{where}: findings must be a tuple of finding kinds (str)")
    if not isinstance(examples, int) or examples < 0:
        raise TypeError(f"{where}: examples must be an int >= 0")
    text = textwrap.dedent(description).strip()
    return ExportCase(name, category, tags, text, per_mode, build, rewrite, examples, modes, findings, declared)


def _load() -> dict[str, ExportCase]:
    for category in CATEGORIES:
        importlib.import_module(f"exportdb.cases.{category}")
    if not _VERSIONED:
        _apply_versions()
    return _REGISTRY


_VERSIONED: list[bool] = []


def _apply_versions() -> None:
    """Fold exportdb/versions.py (what older torch releases do) into the cases' declarations."""
    from dataclasses import replace

    from exportdb.versions import OLDER

    version = installed_torch()
    for (name, mode), steps in OLDER.items():
        c = _REGISTRY.get(name)
        if c is None or mode not in c.modes:
            raise ValueError(f"exportdb/versions.py: no case {name!r} running in mode {mode!r}")
        declared = dict(c.declared or c.expect)
        exp: Any = declared[mode]
        for until, *what in reversed(steps):  # build the chain from the newest step back
            exp = Changed(_expectation(what, f"exportdb/versions.py[{name!r}, {mode!r}]"), at=until, after=exp)
        declared[mode] = exp
        expect = {m: e.resolve(version) if isinstance(e, Changed) else e for m, e in declared.items()}
        _REGISTRY[name] = replace(c, expect=expect, declared=declared)
    _VERSIONED.append(True)


def _expectation(what: list[str], where: str) -> Expectation:
    kind, *rest = what
    if kind == "passes":
        return PASS
    if kind == "fails":
        return Fails(rest[0], stage=rest[1] if len(rest) > 1 else None)
    if kind == "skip":
        return Skip(rest[0])
    raise ValueError(f"{where}: unknown outcome {kind!r} (passes, fails, skip)")


def all_cases() -> list[ExportCase]:
    """Return every case, in category order then declaration order."""
    cases = _load()
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return sorted(cases.values(), key=lambda c: order[c.category])


def get(name: str) -> ExportCase:
    """Return the case called ``name``; raise KeyError naming it when unknown."""
    cases = _load()
    if name not in cases:
        raise KeyError(f"no exportdb case named {name!r}")
    return cases[name]


def by_tag(tag: str) -> list[ExportCase]:
    """Return the cases carrying ``tag`` (ValueError for a tag outside the taxonomy)."""
    if tag not in TAGS:
        raise ValueError(f"unknown tag {tag!r}; known tags: {sorted(TAGS)}")
    return [c for c in all_cases() if tag in c.tags]


def by_category(category: str) -> list[ExportCase]:
    """Return the cases declared in ``exportdb/cases/<category>.py``."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; categories: {CATEGORIES}")
    return [c for c in all_cases() if c.category == category]


def validate() -> list[str]:
    """Return problems across cases (dangling or failing rewrites), empty when consistent."""
    cases = _load()
    problems = []
    for c in cases.values():
        if c.rewrite is None:
            continue
        target = cases.get(c.rewrite)
        if target is None:
            problems.append(f"{c.name}: rewrite {c.rewrite!r} is not a case")
            continue
        # Rewrites are the catalog's advice on the newest torch; on an older one both may fail.
        newest, target_newest = c.expect_on(None), target.expect_on(None)
        failing = [m for m in c.modes if isinstance(newest[m], Fails)]
        still = [m for m in failing if m not in target.modes or isinstance(target_newest[m], Fails)]
        if still:
            problems.append(f"{c.name}: rewrite {c.rewrite!r} also fails in {still}")
    return problems
