"""The dynamism ledger: what each declared dynamic dim became in the program, and what the checks ran of it.

A green verdict says every check held; a user also asks *which of my dims stayed dynamic*. For
every declared root dim this records exactly one outcome read off the program (torch's own
word, not a guess): ``dynamic`` over the declared range, ``narrowed`` to a sub-range,
``specialized`` to one size (at a declared bound too, pytorch#146046), ``related`` to another dim
(``a = b``, ``2*s0``), ``unbounded`` where the program accepts sizes past the declared range (no
guard, or a runtime without input checks: the reject check's finding). Beside it, what the
checks ran of that dim: the bounds the drawn-shape check probes first, how many drawn shapes the
program accepted, whether out-of-range sizes were refused, sizes 0/1 where they were declared.
A failure whose counterexample puts a dim at a size its exported range refuses names that dim.

Recorded after the walk, whatever stopped it, from facts every mode holds for itself (its own
program) or takes with a proven-same program's results (the counts and findings): a mode that
reused another's walk gets the same ledger it would have made.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from exportcore.guards import root_axes
from exportcore.outcome import DimOutcome
from exportcore.shapes.guard_site import specialized_to
from exportcore.shapes.solve import symbol

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.guards import ExportedRange

__all__ = ["record"]


def record(ctx: Run) -> None:
    """Set ``ctx.outcome.dims``, one entry per declared root dim; never raises (it only describes)."""
    if ctx.spec is None or not ctx.spec.roots:
        return
    try:
        dims = [_one(ctx, name) for name in ctx.spec.roots]
        for entry in dims:  # ``b = a``: a is related to b as much as b to a
            if entry.kind == "unknown":
                tied = [d.name for d in dims if d.kind == "related" and d.exported == f"= {entry.name}"]
                if tied:
                    entry.kind, entry.exported = "related", "= " + " = ".join(tied)
        ctx.outcome.dims = dims
    except Exception:  # noqa: BLE001 - the ledger describes the verdict; it must never change it
        ctx.outcome.dims = []


def _one(ctx: Run, name: str) -> DimOutcome:
    root = ctx.spec.roots[name]
    declared = f"[{root.min}, {'int_oo' if root.max is None else root.max}]"
    where, exported = _read(ctx, name)
    entry = DimOutcome(name=name, declared=declared, kind="unknown", where=where)
    if exported is None:  # no program: a capture that failed, perhaps on this very dim
        _from_refusal(ctx, entry)
        return entry
    if isinstance(exported, int):
        entry.kind, entry.exported = "specialized", str(exported)
        if exported in (root.min, root.max):
            entry.exported += " (the declared bound)"
    elif isinstance(exported, str):  # another dim's symbol, or an expression of one
        entry.kind, entry.exported = "related", f"= {exported}"
    else:
        low = ctx.spec.root_range(name)[0]  # 2 for a size (torch specializes 0/1); a derived-only root's own min
        entry.kind, entry.exported = _compare(low, root.max, exported), exported.text()
    named = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w.])")
    if any(f.kind == "reject_unguarded" and named.search(f.message) for f in ctx.outcome.findings):
        entry.kind = "unbounded"
    entry.checked = _checked(ctx, name, entry.kind)
    if entry.kind == "narrowed" and root.max is not None and entry.checked.startswith("ran "):
        # torch 2.6 states p >= 2 for H = 16*p and accepts p = 1: the runs, not the statement, decide
        entry.kind = "dynamic"
        entry.exported = f"[{low}, {root.max}] (torch states {entry.exported}; both bounds ran)"
    entry.failed = _failed_here(ctx, name, exported)
    if not entry.failed:
        _asserted_here(ctx, entry)
    if getattr(ctx, "target", None):
        _on_runtime(ctx, entry)
    return entry


_SHAPE = re.compile(r"(\S+?)=\[([0-9, ]*)\]")


def _on_runtime(ctx: Run, entry: DimOutcome) -> None:
    """A target column's ledger says what its runtime did with the dim's sizes, not only what the program states.

    The program read above is the mode's export the target lowered; the runtime may accept more (no
    input checks) or refuse a size the program takes. Its shapes table holds its verdict on every input
    the checks ran: those sizes are measured (an input out of range for another reason, a static dim
    changed, says nothing of this dim); others are not, and the text says so.
    """
    target, name = ctx.target, entry.name
    seen: dict[tuple[bool, bool], set[int]] = {}  # (inside the declared range, ran it) -> the dim's sizes
    for row in ctx.outcome.shape_table:
        cell = row.cells.get(target)
        inside = row.kind in ("example", "in range")
        if cell is None or not (inside or row.kind.endswith(f":{name})")):
            continue
        value = _row_value(ctx, row.shapes, name)
        if value is not None:
            seen.setdefault((inside, cell == "accepted"), set()).add(value)
    if not seen:
        said = f"no size of it ran on the {target} runtime: what the runtime accepts is not measured"
        entry.checked = "; ".join(part for part in (said, entry.checked) if part)
        return
    words = {(True, True): "took", (True, False): "refused or failed at", (False, False): "refused past the range",
             (False, True): "took past the range"}
    said = ", ".join(f"{words[key]} {_sizes(seen[key])}" for key in words if key in seen)
    entry.checked = "; ".join(part for part in (f"on the {target} runtime: {said}", entry.checked) if part)
    if (False, True) in seen:  # measured: the runtime ran a size the declared range excludes
        entry.kind = "unbounded"
    if (True, False) in seen and not entry.failed:
        entry.failed = f"the {target} runtime refused or failed inputs with {name} = {_sizes(seen[True, False])}" \
                       ", declared in range"


def _row_value(ctx: Run, shapes: str, name: str) -> int | None:
    """The dim's value in one shapes-table row (``args[0]=[2, 4], ...``), read off an axis that holds it."""
    found = {path: [int(n) for n in sizes.split(",") if n.strip()] for path, sizes in _SHAPE.findall(shapes)}
    for slot in ctx.spec.tensors:
        shape = found.get(slot.path)
        for i, axis in enumerate(slot.axes):
            if axis.root != name or shape is None or i >= len(shape):
                continue
            value = shape[i] if not axis.derived else _root_value(axis.expr, name, shape[i])
            if value is not None:
                return value
    return None


def _sizes(values: set[int]) -> str:
    return ", ".join(str(v) for v in sorted(values))


def _read(ctx: Run, name: str) -> tuple[str, int | str | ExportedRange | None]:
    """(where it was read, what the program takes): an int, another dim's name, or a range."""
    shapes = getattr(ctx, "exported_shapes", None) or {}
    if ctx.ep is None or not shapes:
        return "", None
    symbols = getattr(ctx, "symbols", None) or {}
    for path, axis, root in root_axes(ctx.spec):
        shape = shapes.get(path)
        if root != name or shape is None or axis >= len(shape):
            continue
        where, size = f"{path} dim {axis}", shape[axis]
        if isinstance(size, int):
            return where, size
        names = symbols.get(size, "").split("=")
        if name not in names:  # torch folded it into an expression of another dim's symbol
            return where, _in_names(size, symbols)
        others = [n for n in names if n != name]
        if others:
            return where, " = ".join(others)
        found = ctx.ranges.get(size)
        return where, found if found is not None else None
    for symbol, names in symbols.items():  # a root seen only through derived axes (``2*p``)
        if name in names.split("="):
            found = ctx.ranges.get(symbol)
            return "", found
    return "", None


def _in_names(expr: str, symbols: dict[str, str]) -> str:
    for symbol, names in sorted(symbols.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(symbol, names.split("=")[0])
    return expr


def _compare(lo: int, hi: int | None, exported: ExportedRange) -> str:
    """``lo``: the lowest value the checks promise (a size's declared 0 or 1 is torch's 0/1 matter)."""
    low, high = exported.floor, exported.ceiling
    top = float("inf") if hi is None else hi
    if low < lo and lo > 2 or high > top:
        return "unbounded"
    if low > lo or high < top:
        return "narrowed"
    return "dynamic"


def _checked(ctx: Run, name: str, kind: str) -> str:
    outcome = ctx.outcome
    said = []
    lo, hi = ctx.spec.root_range(name)
    bounds = 1 + len(ctx.spec.roots)  # the drawn-shape check probes every root's low, then each one's high
    accepting = "accept" in outcome.checks and ctx.examples >= bounds and outcome.examples.tried
    if accepting and outcome.status == "passed":
        said.append(f"ran {lo} and {hi}" + (f", {outcome.examples.accepted} drawn shapes accepted"
                                            if outcome.examples.accepted else ""))
    root = ctx.spec.roots[name]
    if "reject" in outcome.checks and outcome.status == "passed" and kind != "unbounded" \
            and outcome.examples.rejected and root.max is not None:
        said.append("out-of-range sizes refused")
    is_size = any(r == name for _, _, r in root_axes(ctx.spec))  # not a root only derived sizes read (2*p)
    if root.min < 2 and is_size and "accept" in outcome.checks:
        open01 = any(f.kind == "size01_accepted" and f" {name} " in f.message for f in outcome.findings)
        said.append("sizes 0/1 run unchecked (torch specializes them)" if open01 else "sizes 0/1 checked")
    return "; ".join(said)


def _failed_here(ctx: Run, name: str, exported: object) -> str:
    """Why the case failed on this dim: the counterexample puts it at a size its exported range refuses."""
    example = ctx.outcome.counterexample
    failure = ctx.outcome.failure
    if example is None or failure is None or failure.stage != "guards" or isinstance(exported, str):
        return ""
    for slot in ctx.spec.tensors:
        shape = example.shapes.get(slot.path)
        for i, axis in enumerate(slot.axes):
            if axis.root != name or shape is None or i >= len(shape):
                continue
            value = _root_value(axis.expr, name, shape[i])
            if value is None:
                continue
            refused = value != exported if isinstance(exported, int) else (
                value < exported.floor or value > exported.ceiling)  # type: ignore[union-attr]
            if refused:
                size = f"size {shape[i]} ({name} = {value})" if axis.derived else f"size {value}"
                return f"{size} is declared but the program refuses it"
    return ""


_ASSERTED = re.compile(r"Runtime assertion failed for expression (.+?) on node")


def _asserted_here(ctx: Run, entry: DimOutcome) -> None:
    """A runtime assert on this dim (a guard the capture deferred) refused a size the range declares.

    The program's range says nothing of it (``[1, 8]`` stays ``[1, 8]``): the assert lives in the
    graph, so the ledger would read "dynamic as declared" for a program that refuses odd sizes.
    """
    failure, example = ctx.outcome.failure, ctx.outcome.counterexample
    if failure is None or failure.stage != "run" or example is None:
        return
    asserted = _ASSERTED.search(failure.message)
    symbols = getattr(ctx, "symbols", None) or {}
    mine = [symbol for symbol, names in symbols.items() if entry.name in names.split("=")]
    if asserted is None or not any(re.search(rf"\b{re.escape(s)}\b", asserted.group(1)) for s in mine):
        return
    relation = _in_names(asserted.group(1), symbols)
    sizes = sorted({shape[axis] for path, axis, root in root_axes(ctx.spec) if root == entry.name
                    for shape in [example.shapes.get(path)] if shape is not None and axis < len(shape)})
    if entry.kind == "dynamic":
        entry.kind = "narrowed"
    entry.exported = f"{entry.exported} where {relation} (a runtime assert)".strip()
    at = f"size {sizes[0]}" if len(sizes) == 1 else "a size"
    entry.failed = f"{at} is declared but the program's runtime assert {relation} refuses it"


def _root_value(expr: object, name: str, size: int) -> int | None:
    """The root's value at which ``expr`` (A*root + B) is ``size``."""
    import sympy

    try:
        found = sympy.solve(sympy.Eq(expr, size), symbol(name))
    except Exception:  # noqa: BLE001 - an axis whose expression sympy cannot invert names no value
        return None
    values = [int(v) for v in found if getattr(v, "is_integer", False)]
    return values[0] if values else None


_FIX = re.compile(r"^\s+(\w+) = (.+)$")
_BOUNDS = re.compile(r"Dim\('\w+'(?:, min=(\d+))?(?:, max=(\d+))?\)")


def _from_refusal(ctx: Run, entry: DimOutcome) -> None:
    """A capture torch refused over the declared dims: its suggested fix for this dim says what it became.

    torch's constraint violation ends with ``Suggested fixes:`` one line per dim it could not keep
    as declared: ``batch = 4`` (specialized), ``batch = Dim('batch', max=32)`` (narrowed),
    ``b = a`` (related). A dim it does not name is not known from a failed capture.
    """
    failure = ctx.outcome.failure
    if failure is None or failure.stage != "constraints":
        return
    text = failure.detail or failure.message
    fixes = text.split("Suggested fixes:", 1)[1].splitlines() if "Suggested fixes:" in text else []
    for line in fixes:
        found = _FIX.match(line)
        if found is None:
            if line.strip():
                break  # the block ends at the first line of another kind
            continue
        if found.group(1) != entry.name:
            continue
        value = found.group(2).strip()
        bounds = _BOUNDS.fullmatch(value)
        if value.lstrip("-").isdigit():
            entry.kind, entry.exported = "specialized", value
        elif bounds is not None:
            root = ctx.spec.roots[entry.name]
            lo = bounds.group(1) or str(root.min)
            hi = bounds.group(2) or ("int_oo" if root.max is None else str(root.max))
            entry.kind, entry.exported = "narrowed", f"[{lo}, {hi}]"
        else:
            entry.kind, entry.exported = "related", f"= {value}"
        entry.failed = f"torch refused the declared range (it suggests {entry.name} = {value})"
        return
    constant = specialized_to(failure.message)
    if constant is not None and f"({entry.name})" in failure.message.split("!", 1)[0]:
        entry.kind, entry.exported = "specialized", str(constant)
        entry.failed = f"the export fixed it to {constant}"
