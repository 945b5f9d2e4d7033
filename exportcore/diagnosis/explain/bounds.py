"""Solve torch's violated dynamic-shape guards for the bounds of the dims they name.

torch reports a range it cannot prove as ``Not all values of w = L['x'].size()[3] in the
specified range 32 <= w <= 128 satisfy the generated guard (1 + (((-1) + L['x'].size()[3]) // 32)) != 1.``
The guard is parsed into a sympy expression (Python's ``//``, ``%``, ``round`` and torch's
sympy functions keep their integer meaning) and evaluated over the declared range: the values
that satisfy it, around the example size, are the range the model really supports.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Violation", "violations", "solve", "Solution"]

_VIOLATION = re.compile(
    r"Not all values of (?P<name>\w+) = (?P<source>\S+) in the specified range .*? "
    r"satisfy the generated guard (?P<guard>.+?)\.?\s*$",
    re.M,
)
#: Past a declared unbounded max, values are checked up to here (and the guard assumed to hold beyond).
_SCAN_CAP = 4096


@dataclass(frozen=True)
class Violation:
    name: str  # the Dim's name
    source: str  # torch's name for the size, e.g. L['x'].size()[3]
    guard: str  # the guard as torch printed it


@dataclass(frozen=True)
class Solution:
    name: str
    bounds: tuple[int, int | None] | None  # the supported (min, max); None: no range satisfies the guards
    guards: tuple[str, ...]  # the guards, spelled with the dim's name
    note: str = ""  # why the bounds are not the answer, when they are not
    step: int = 1  # > 1: only every step-th value from bounds[0] satisfies the guards (declare a derived dim)


def violations(message: str) -> list[Violation]:
    """Return the 'Not all values of ... satisfy the generated guard ...' lines of a torch message."""
    return [Violation(m["name"], m["source"], m["guard"].strip()) for m in _VIOLATION.finditer(message)]


def solve(found: list[Violation], declared: dict[str, tuple[int, int | None]],
          examples: dict[str, int]) -> list[Solution]:
    """Return, per violated dim, the range around its example size where all its guards hold."""
    sources = {v.source: v.name for v in found}
    by_name: dict[str, list[str]] = {}
    for v in found:
        by_name.setdefault(v.name, []).append(_rename(v.guard, sources))
    out = []
    for name, guards in by_name.items():
        if name not in declared:
            out.append(Solution(name, None, tuple(guards), f"{name} is not a Dim of the declared spec"))
            continue
        try:
            tests = [_predicate(g, name) for g in guards]
        except _Unparsed as exc:
            out.append(Solution(name, None, tuple(guards), f"cannot read the guard ({exc})"))
            continue
        out.append(_bounds(name, guards, tests, declared[name], examples.get(name)))
    return out


def _rename(guard: str, sources: dict[str, str]) -> str:
    for source in sorted(sources, key=len, reverse=True):
        guard = guard.replace(source, sources[source])
    return guard


def _bounds(name: str, guards: list[str], tests: list[Callable[[int], bool]],
            declared: tuple[int, int | None], example: int | None) -> Solution:
    lo, hi = declared
    top = hi if hi is not None else max(_SCAN_CAP, lo + _SCAN_CAP, 8 * (example or 0))
    good = [v for v in range(lo, top + 1) if all(_holds(t, v) for t in tests)]
    if not good:
        return Solution(name, None, tuple(guards), f"no {name} in {_show(lo, hi)} satisfies the guard(s)")
    runs = _runs(good)
    steps = {b - a for a, b in zip(good, good[1:])}
    if len(good) > 2 and len(steps) == 1 and next(iter(steps)) > 1:
        step = next(iter(steps))
        last = hi if good[-1] + step > top else good[-1]
        return Solution(name, (good[0], last), tuple(guards), step=step)
    anchor = example if example is not None and any(a <= example <= b for a, b in runs) else None
    start, end = next(((a, b) for a, b in runs if anchor is not None and a <= anchor <= b),
                      max(runs, key=lambda r: r[1] - r[0]))
    new = (start, hi if end == top else end)
    if new == (lo, hi):
        return Solution(name, None, tuple(guards),
                        f"the guard holds for every {name} in {_show(lo, hi)}, but torch cannot prove it: "
                        "no range fixes this, rewrite the size arithmetic (see the ExportDB case)")
    note = ""
    if len(runs) > 1:
        note = f"{name} also satisfies the guard(s) outside {_show(*new)}; one Dim range cannot hold them all"
    return Solution(name, new, tuple(guards), note)


def _show(lo: int, hi: int | None) -> str:
    return f"[{lo}, {'int_oo' if hi is None else hi}]"


def _runs(values: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and runs[-1][1] == v - 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return runs


def _holds(test: Callable[[int], bool], value: int) -> bool:
    try:
        return bool(test(value))
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return False


class _Unparsed(ValueError):
    pass


def _predicate(guard: str, name: str) -> Callable[[int], bool]:
    """Return the guard as a function of the dim's value, built through sympy."""
    import sympy

    symbol = sympy.Symbol(name, integer=True, nonnegative=True)
    try:
        tree = ast.parse(guard, mode="eval").body
    except SyntaxError as exc:
        raise _Unparsed(f"not Python: {exc.msg}") from None
    expr = _Sympify(symbol).visit(tree)
    fn = sympy.lambdify([symbol], expr, modules=[_NUMERIC, "math"])
    return lambda value: fn(value)


def _py_round(x: Any) -> int:
    return round(x)


_NUMERIC: dict[str, Any] = {
    "floor": math.floor, "ceiling": math.ceil, "Mod": lambda a, b: a % b, "Max": max, "Min": min,
    "PyRound": _py_round, "Abs": abs,
}


class _Sympify(ast.NodeVisitor):
    """Turn a guard's Python AST into sympy, keeping integer semantics of //, % and round()."""

    def __init__(self, symbol: Any) -> None:
        import sympy

        self.sp = sympy
        self.symbol = symbol
        self.round = sympy.Function("PyRound")

    def generic_visit(self, node: ast.AST) -> Any:
        raise _Unparsed(f"unsupported syntax {type(node).__name__}")

    def visit_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bool):
            return self.sp.true if node.value else self.sp.false
        if isinstance(node.value, (int, float)):
            return self.sp.nsimplify(node.value)
        raise _Unparsed(f"constant {node.value!r}")

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id == self.symbol.name:
            return self.symbol
        raise _Unparsed(f"{node.id!r} is another size or value")

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.Not):
            return self.sp.Not(value)
        if isinstance(node.op, ast.UAdd):
            return value
        raise _Unparsed(type(node.op).__name__)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        a, b = self.visit(node.left), self.visit(node.right)
        ops: dict[type, Callable[[Any, Any], Any]] = {
            ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
            ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: self.sp.floor(x / y),
            ast.Mod: self.sp.Mod, ast.Pow: lambda x, y: x**y,
        }
        if type(node.op) not in ops:
            raise _Unparsed(type(node.op).__name__)
        return ops[type(node.op)](a, b)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.visit(v) for v in node.values]
        return self.sp.And(*values) if isinstance(node.op, ast.And) else self.sp.Or(*values)

    def visit_Compare(self, node: ast.Compare) -> Any:
        rel = {ast.Eq: self.sp.Eq, ast.NotEq: self.sp.Ne, ast.Lt: self.sp.Lt, ast.LtE: self.sp.Le,
               ast.Gt: self.sp.Gt, ast.GtE: self.sp.Ge}
        left, parts = self.visit(node.left), []
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in rel:
                raise _Unparsed(type(op).__name__)
            right = self.visit(right_node)
            parts.append(rel[type(op)](left, right, evaluate=False))
            left = right
        return self.sp.And(*parts) if len(parts) > 1 else parts[0]

    def visit_Call(self, node: ast.Call) -> Any:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        args = [self.visit(a) for a in node.args]
        sp = self.sp
        table: dict[str, Callable[..., Any]] = {
            "round": self.round, "floor": sp.floor, "FloorToInt": sp.floor, "ceiling": sp.ceiling, "ceil": sp.ceiling,
            "int": lambda a: sp.sign(a) * sp.floor(sp.Abs(a)),
            "CeilToInt": sp.ceiling, "Max": sp.Max, "Min": sp.Min, "Mod": sp.Mod, "PythonMod": sp.Mod,
            "FloorDiv": lambda a, b: sp.floor(a / b), "IntTrueDiv": lambda a, b: a / b,
            "FloatTrueDiv": lambda a, b: a / b, "Abs": sp.Abs, "Eq": sp.Eq, "Ne": sp.Ne,
            "TruncToInt": lambda a: sp.sign(a) * sp.floor(sp.Abs(a)),
        }
        if name not in table or node.keywords:
            raise _Unparsed(f"function {name or '?'}()")
        return table[name](*args)
