"""The runtime-check loop: probe each dim's bounds, then draw in-spec inputs with hypothesis; shrink failures.

The caller exports once and hands in a ``probe(args, kwargs) -> Probe`` that runs eager and
the exported module(s) on one input; this module only decides which inputs to try.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

import hypothesis
from hypothesis import HealthCheck, Verbosity, given, reject
from hypothesis.errors import HypothesisException, Unsatisfiable
from hypothesis.strategies import SearchStrategy

from exportcore.case import DEFAULT_EXAMPLES
from exportcore.outcome import Counterexample, ExampleStats
from exportcore.shapes.storage import outside_working_dir
from exportcore.shapes.spec import ShapeSpec
from exportcore.shapes.strategies import concrete_invalid
from exportcore.shapes.synth import Drawn, SynthesisError, drawn_for, inputs_strategy, synthesize

__all__ = [
    "Probe", "ExploreResult", "explore", "boundary_assignments", "below_min_inputs", "reject_inputs", "PROBE_STATUSES",
    "DEFAULT_EXAMPLES",
    "examples_for", "hypothesis_settings", "counterexample",
]

PROBE_STATUSES = ("ok", "discard", "fail")
#: Notes kept per check on shapes whose inputs could not be built (the count is in ExampleStats.skipped).
_MAX_SKIP_NOTES = 3


@dataclass
class Probe:
    status: str  # "ok" | "discard" (eager rejects the input) | "fail"
    message: str = ""
    stage: str = "numerics"

    def __post_init__(self) -> None:
        if self.status not in PROBE_STATUSES:
            raise ValueError(f"Probe.status must be one of {PROBE_STATUSES}, got {self.status!r}")


@dataclass
class ExploreResult:
    stats: ExampleStats
    counterexample: Counterexample | None = None
    failure: Probe | None = None
    drawn: list[dict[str, list[int]]] = field(default_factory=list)  # shapes probed, in order
    notes: list[str] = field(default_factory=list)  # shapes not probed and why
    first_discard: str = ""  # why the first discarded shape was discarded (eager's error)


class _ProbeFailed(Exception):
    def __init__(self, probe: Probe, drawn: Drawn) -> None:
        super().__init__(probe.message)
        self.probe = probe
        self.drawn = drawn


def explore(
    spec: ShapeSpec,
    args: tuple,
    kwargs: dict | None,
    probe: Callable[[tuple, dict], Probe],
    *,
    examples: int,
    seed: int,
    inputs: Any = None,
    settings: hypothesis.settings | None = None,
) -> ExploreResult:
    """Probe ``examples`` in-spec inputs (the bounds, then hypothesis' draws); on failure return the shrunk counterexample."""
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 0:
        raise ValueError(f"examples must be a non-negative int, got {examples!r}")
    result = ExploreResult(ExampleStats())
    if examples == 0 or not spec.roots and inputs is None:
        return result  # nothing varies: the example inputs are checked by the caller
    strategy = inputs_strategy(spec, args, kwargs, inputs, seed=seed)
    # Each root's bounds are probed first, whatever hypothesis draws then (its draws favour cheap
    # sizes, and a repeat of a bound is not counted); they count towards ``examples``. A user
    # strategy draws its own inputs: no bounds to probe.
    bounds = [] if isinstance(inputs, SearchStrategy) else boundary_assignments(spec)[:examples]
    attempt = _Attempts(probe, result, budget=examples * 3 + 10)
    _probe_bounds(spec, bounds, lambda a: drawn_for(spec, args, kwargs, a, inputs, seed=seed), attempt, inputs)
    if result.failure is None and examples > len(bounds):
        _search(spec, strategy, attempt, hypothesis_settings(examples - len(bounds), settings), seed, inputs)
    stats = result.stats
    if stats.tried and stats.discarded * 2 > stats.tried:
        stats.note = (
            f"{stats.discarded} of {stats.tried} drawn shapes were rejected by the eager model: "
            "the declared dynamic range is probably wider than what the model accepts"
        )
    return result


class _Attempts:
    """Probe drawn inputs, each shape once, counting what every probe did into the result."""

    def __init__(self, probe: Callable[[tuple, dict], Probe], result: ExploreResult, budget: int) -> None:
        self.probe = probe
        self.result = result
        self.budget = budget  # stop paying for probes once eager keeps refusing the spec
        self.seen: dict[tuple, Probe] = {}
        self.failed = False

    def __call__(self, drawn: Drawn) -> tuple[Probe, bool]:
        """Probe ``drawn`` unless its shape was probed already; return (outcome, whether probed now)."""
        result, stats = self.result, self.result.stats
        key = tuple(sorted(drawn.assignment.items())) if drawn.assignment else None
        outcome = self.seen.get(key) if key is not None else None
        if outcome is not None:
            return outcome, False  # edge slots make repeats likely; a shape is not paid for twice
        if drawn.skip:
            if key is not None:
                self.seen[key] = Probe("discard", drawn.skip)
            stats.skipped += 1
            if len(result.notes) < _MAX_SKIP_NOTES:
                result.notes.append(f"drawn shape not probed: {drawn.skip}")
            return Probe("discard", drawn.skip), True
        stats.tried += 1
        result.drawn.append({p: list(s) for p, s in drawn.shapes.items()})
        try:
            outcome = Probe("fail", drawn.problem, "input") if drawn.problem else _call(self.probe, drawn)
        except TypeError:
            self.failed = True  # a broken probe: let hypothesis report it, unbudgeted
            raise
        if key is not None:
            self.seen[key] = outcome
        if outcome.status == "discard":
            stats.discarded += 1
            result.first_discard = result.first_discard or outcome.message
        elif outcome.status == "ok":
            stats.accepted += 1
        return outcome, True


def _probe_bounds(spec: ShapeSpec, bounds: list[dict[str, int]], draw: Callable[[dict[str, int]], Drawn],
                  attempt: _Attempts, inputs: Any) -> None:
    """Probe each boundary assignment in turn; the first failure, lowered, is the result's."""
    for assignment in bounds:
        drawn = draw(assignment)
        outcome, _ = attempt(drawn)
        if outcome.status == "fail":
            drawn, outcome = _lower_failure(spec, drawn, outcome, draw, attempt)
            attempt.result.failure = outcome
            attempt.result.counterexample = counterexample(spec, drawn, outcome, inputs)
            return


def _search(spec: ShapeSpec, strategy: SearchStrategy, attempt: _Attempts, settings: hypothesis.settings,
            seed: int, inputs: Any) -> None:
    """Let hypothesis draw in-spec inputs; a failing probe, shrunk, is the result's failure."""
    result = attempt.result

    @given(strategy)
    def run(drawn: Drawn) -> None:
        if not attempt.failed and result.stats.tried >= attempt.budget:
            reject()
        outcome, fresh = attempt(drawn)
        if outcome.status == "fail":  # re-raised on a repeat too, so that shrinking can use it
            attempt.failed = True
            raise _ProbeFailed(outcome, drawn)
        if not fresh or outcome.status == "discard":
            reject()  # a repeat teaches nothing

    run = hypothesis.seed(seed)(settings(run))
    try:
        with outside_working_dir():
            run()
    except _ProbeFailed as exc:
        result.failure = exc.probe
        result.counterexample = counterexample(spec, exc.drawn, exc.probe, inputs)
    except Unsatisfiable:
        pass  # every draw was discarded: reported through the caller's note
    except HypothesisException as exc:  # e.g. Flaky: the probe is not deterministic
        cause = _first_probe_failure(exc)
        if cause is None:
            raise
        result.failure = cause.probe
        result.counterexample = counterexample(spec, cause.drawn, cause.probe, inputs)


def boundary_assignments(spec: ShapeSpec) -> list[dict[str, int]]:
    """Every root at its lowest drawn value, then each root alone at its highest (inputs within budget)."""
    low = spec.low_assignment()
    out = [low] if spec.roots else []
    for name in spec.roots:
        high = {**low, name: spec.root_range(name)[1]}
        if high not in out and spec.fits(high):
            out.append(high)
    return out


def _lower_failure(
    spec: ShapeSpec,
    drawn: Drawn,
    outcome: Probe,
    make: Callable[[dict[str, int]], Drawn],
    attempt: Callable[[Drawn], tuple[Probe, bool]],
) -> tuple[Drawn, Probe]:
    """Bisect each root of a failing bound down towards its lowest value: the smallest failure found.

    A root's high bound is probed only after every root at its lowest passed, so its low end is
    a passing point; hypothesis does not shrink a shape it did not draw, this does it by hand.
    """
    for name in spec.roots:
        good, bad = spec.root_range(name)[0], drawn.assignment[name]
        while bad - good > 1:
            mid = (good + bad) // 2
            tried = make({**drawn.assignment, name: mid})
            result, _ = attempt(tried)
            if result.status == "fail":
                bad, drawn, outcome = mid, tried, result
            else:
                good = mid
    return drawn, outcome


def examples_for(examples: int | None, parent: hypothesis.settings | None = None) -> int:
    """Return how many shapes to draw: ``examples`` when given, else the profile's own count, else 10.

    An explicit count (the marker's ``examples``, ``--export-examples``) beats a hypothesis
    profile: a profile sets a suite-wide default, the count is about this case. A profile
    whose ``max_examples`` is hypothesis' default (100) said nothing about it.
    """
    if examples is not None:
        return examples
    if parent is not None and parent.max_examples != hypothesis.settings.get_profile("default").max_examples:
        return parent.max_examples
    return DEFAULT_EXAMPLES


def hypothesis_settings(examples: int, parent: hypothesis.settings | None = None) -> hypothesis.settings:
    """Return the settings explore runs under: ``parent`` (seed, derandomize, ...) drawing ``examples``."""
    return hypothesis.settings(
        parent,
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
        report_multiple_bugs=False,
    )


def reject_inputs(
    spec: ShapeSpec, args: tuple, kwargs: dict | None, *, count: int, seed: int, notes: list[str] | None = None,
) -> list[tuple[str, tuple, dict]]:
    """Return up to ``count`` (label, args, kwargs) out-of-spec inputs, covering each kind first.

    A probe whose inputs cannot be built at its shape (exportcore.shapes.layouts) is left out, and
    said so in ``notes``: never a probe at another shape than its label claims.
    """
    rng = random.Random(seed)
    by_kind: dict[str, list[tuple[str, dict[str, int]]]] = defaultdict(list)
    for label, assignment in concrete_invalid(spec, rng):
        by_kind[label.split(":", 1)[0]].append((label, assignment))
    for group in by_kind.values():
        rng.shuffle(group)
    picked: list[tuple[str, dict[str, int]]] = []
    while len(picked) < count and any(by_kind.values()):
        for group in by_kind.values():
            if group and len(picked) < count:
                picked.append(group.pop())
    out = []
    for i, (label, assignment) in enumerate(picked):
        try:
            new_args, new_kwargs = synthesize(args, kwargs, spec.shapes_for(assignment), seed=seed + i)
        except SynthesisError as exc:
            if notes is not None:
                notes.append(f"out-of-spec probe {label} not run: {exc}")
            continue
        out.append((label, new_args, new_kwargs))
    return out


def below_min_inputs(
    spec: ShapeSpec, args: tuple, kwargs: dict | None, *, seed: int, notes: list[str] | None = None,
) -> list[tuple[str, tuple, dict]]:
    """Return one (label, args, kwargs) per named dim declared ``min >= 2``, at ``min - 1``.

    :func:`reject_inputs` leaves sizes 0 and 1 out (torch specializes them: a program's answer
    there is the size01 check's matter); a runtime has no such split, so its checks ask for these.
    """
    out = []
    for name, root in spec.roots.items():
        if root.kind != "named" or root.min is None or root.min < 2:
            continue
        try:
            shapes = spec.shapes_for(spec.example_assignment() | {name: root.min - 1})
            new_args, new_kwargs = synthesize(args, kwargs, shapes, seed=seed)
        except Exception as exc:  # noqa: BLE001 - a spec whose relations cannot take that size: no such probe
            if notes is not None:
                notes.append(f"out-of-spec probe below_min:{name} not run: {exc}")
            continue
        out.append((f"below_min:{name}", new_args, new_kwargs))
    return out


def _call(probe: Callable[[tuple, dict], Probe], drawn: Drawn) -> Probe:
    try:
        outcome = probe(drawn.args, drawn.kwargs)
    except Exception as exc:  # a probe that raises is a failure of the input, not of explore
        return Probe("fail", f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__, "run")
    if not isinstance(outcome, Probe):
        raise TypeError(f"probe must return a Probe, got {type(outcome).__name__}")
    return outcome


def _first_probe_failure(exc: BaseException) -> _ProbeFailed | None:
    seen: list[BaseException] = [exc]
    while seen:
        current = seen.pop()
        if isinstance(current, _ProbeFailed):
            return current
        seen.extend(getattr(current, "exceptions", ()) or ())
        if current.__cause__ is not None:
            seen.append(current.__cause__)
        if current.__context__ is not None:
            seen.append(current.__context__)
    return None


def counterexample(spec: ShapeSpec, drawn: Drawn, probe: Probe, inputs: Any) -> Counterexample:
    """The failing input as the outcome reports it: its shapes, the probe's first line, a reproducer."""
    shapes = {p: list(s) for p, s in drawn.shapes.items()}
    where = ", ".join(f"{p}={s}" for p, s in shapes.items())
    dims = ", ".join(f"{k}={v}" for k, v in drawn.assignment.items())
    first = probe.message.strip().splitlines()[0] if probe.message.strip() else probe.status
    message = f"{first} (shapes: {where}" + (f"; dims: {dims})" if dims else ")")
    if inputs is None:
        snippet = (
            "from exportcore.shapes.synth import synthesize\n"
            f"args, kwargs = synthesize(args, kwargs, {dict((p, tuple(s)) for p, s in shapes.items())!r}, "
            f"seed={drawn.seed})\n"
            "expected = model(*args, **kwargs); got = ep.module()(*args, **kwargs)"
        )
    else:
        snippet = f"call the model and ep.module() on inputs of shapes {where}"
    return Counterexample(shapes=shapes, message=message, reproduce=snippet)
