"""Verified option rescue: the export options torch offers for a failing case, each retried with every check.

Tutorials teach that ``backed_size_oblivious`` avoids the 0/1 specialization; nobody says per model
whether it does. For a case that fails at capture, constraints or guards with a dynamic spec, each
option below is tried once, least restrictive first: the whole case is checked again under it (every
check the case ran, the same examples, tolerances and findings rule), and the first that passes is
reported as "rescued by X (verified)" with the code to write; if none does, that is said too. An option
is either torch's process-wide config (``torch.fx.experimental._config``), set only around the re-check
and read by the result cache's proof with the other settings (exportcore.sandbox.isolation.settings_text),
or one of torch.export.export's keyword arguments (exportcore.case.EXPORT_KWARGS), passed to the
capture and put in the proof's options: a rescued re-check is never served a result found without
the option, nor the other way round. A torch without an option skips it.

The last option, ``additional_inputs``, changes the spec rather than torch's reasoning: torch's own
``torch.export.AdditionalInputs`` is given the examples' inputs resized to the declared spec's lowest
and highest drawn sizes (those eager accepts) and the user's recorded input sets, and the spec it infers
(each varying dim ``Dim.DYNAMIC``: torch finds the relations, such as two dims that must be equal) is
checked like the user's. It is offered only where torch has AdditionalInputs (not in 2.6) and never for
a ShapesSpec; the code to write is the inferred spec itself.

Unbacked dims (a ShapesSpec, torch 2.14+) are not offered: torch raises a data-dependent error at the
first branch on an unbacked size where a backed one guards, so they rescue no guard; and a 0/1
specialization ``backed_size_oblivious`` already rescues without rewriting the user's spec.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any, Iterator

from exportcore.case import EXPORT_KWARGS, Case, EngineOptions
from exportcore.outcome import OptionRescue

if TYPE_CHECKING:
    from exportcore.diagnosis.explain.context import FailedRun as Run
    from exportcore.diagnosis.explain.context import Recheck

__all__ = ["OPTIONS", "option_rescue", "wants_rescue", "rescue_applies", "export_config"]

#: Options retried, in order, least restrictive first: a config flag only changes how torch reasons about sizes;
#: deferred asserts move the guards torch cannot prove into the program, which checks them at run time.
#: A spec inferred by torch.export.AdditionalInputs comes last: it replaces the user's spec.
ADDITIONAL_INPUTS = "additional_inputs"
OPTIONS = ("backed_size_oblivious", "prefer_deferred_runtime_asserts_over_guards", ADDITIONAL_INPUTS)


def wants_rescue(run: Run) -> bool:
    """Whether an option could change the failure: a dynamic-shape failure at capture, constraints or guards."""
    failure = run.outcome.failure
    return (failure is not None and run.outcome.status == "failed" and run.dynamic_shapes is not None
            and run.target is None and rescue_applies(failure.stage, failure.category))


def rescue_applies(stage: str, category: str | None) -> bool:
    """Whether a failure at ``stage`` of ``category`` is one the size options may change (else none is tried)."""
    return stage in ("capture", "constraints", "guards") and (stage != "capture" or category == "torch.dynamic-shape")


def option_rescue(run: Run, recheck: Recheck) -> OptionRescue | None:
    """Retry the case under each available option; the first that passes every check is the rescue."""
    start = time.perf_counter()
    rescue = OptionRescue(status="none")
    for option in OPTIONS:
        if not _available(option, run.dynamic_shapes):
            continue
        spec, config = run.dynamic_shapes, {option: True}
        if option == ADDITIONAL_INPUTS:
            spec, config = _inferred_spec(run), {}
            if spec is None:
                continue
        rescue.tried.append(option)
        case = Case(model=run.model, args=run.args, kwargs=run.kwargs, dynamic_shapes=spec,
                    recorded_inputs=getattr(run, "recorded_inputs", None))
        options = EngineOptions(
            mode=run.mode.name, inputs=run.inputs, seed=run.seed, case_id=run.outcome.case_id, explain="off",
            checks=tuple(sorted(run.checks)), examples=run.examples, rtol=run.rtol, atol=run.atol,
            findings_as_errors=run.findings_as_errors, device=run.device, export_config=config,
            recorded_inputs=case.recorded_inputs,
        )
        verdict = recheck(case, options, run.session)
        if verdict.status == "passed":
            rescue.status, rescue.option = "verified", option
            rescue.findings = sorted({f.kind for f in verdict.findings})
            rescue.code = _spec_code(spec) if option == ADDITIONAL_INPUTS else _code(option)
            break
        failure = verdict.failure
        rescue.reasons[option] = (f"still {verdict.status} at {failure.stage} ({failure.category})"
                                  if failure is not None else f"still {verdict.status}")
    rescue.seconds = round(time.perf_counter() - start, 3)
    return rescue if rescue.tried else None


def _inferred_spec(run: Run) -> Any:
    """The spec torch.export.AdditionalInputs infers from inputs at the declared bounds (None: nothing varies)."""
    import torch

    from exportcore.checks.recorded import recorded_sets
    from exportcore.diagnosis.explain.context import reset
    from exportcore.shapes.synth import synthesize

    spec = run.spec
    if spec is None:
        return None
    additional = torch.export.AdditionalInputs()
    low = spec.low_assignment()
    high = {name: spec.root_range(name)[1] for name in spec.roots}
    candidates = [synthesize(run.args, run.kwargs, spec.shapes_for(at), seed=run.seed) for at in (low, high)]
    try:
        candidates += recorded_sets(getattr(run, "recorded_inputs", None))
    except TypeError:
        pass  # the run reported its broken sets already
    added = 0
    with torch.no_grad():
        for args, kwargs in candidates:
            try:
                run.model(*args, **kwargs)  # a size eager refuses tells torch nothing about the model
            except Exception:  # noqa: BLE001
                continue
            additional.add(tuple(args), dict(kwargs) or None)
            added += 1
    reset(run)  # those eager calls may have moved the model's buffers
    if not added:
        return None
    try:
        inferred = additional.dynamic_shapes(run.model, run.args, run.kwargs or None)
    except ValueError:  # inputs whose non-tensor values differ: torch refuses to infer
        return None
    return inferred if "DYNAMIC" in repr(inferred) else None


def _spec_code(spec: Any) -> str:
    return ("# the spec torch.export.AdditionalInputs infers from inputs at the declared bounds:\n"
            f"dynamic_shapes = {_spec_text(spec)}\n"
            "ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes)")


def _spec_text(value: Any) -> str:
    """``value`` (AdditionalInputs' pytree of Dim hints) as the Python a user pastes."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_spec_text(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (tuple, list)):
        items = ", ".join(_spec_text(item) for item in value) + ("," if len(value) == 1 else "")
        return f"({items})" if isinstance(value, tuple) else f"[{items}]"
    if value is None:
        return "None"
    name = getattr(getattr(value, "type", None), "name", None)  # torch.export.Dim.DYNAMIC / AUTO / STATIC
    return f"Dim.{name}" if isinstance(name, str) else repr(value)


@contextlib.contextmanager
def export_config(options: dict[str, Any]) -> Iterator[None]:
    """Set torch's symbolic-shapes config options for the block (``torch.fx.experimental._config.patch``);
    refuse an option this torch lacks, torch.export.export's own (``EXPORT_KWARGS``) included."""
    from torch.fx.experimental import _config

    unknown = sorted(name for name in options if name == ADDITIONAL_INPUTS or not _available(name))
    if unknown:
        where = "torch.export.export" if unknown[0] in EXPORT_KWARGS else "torch.fx.experimental._config"
        raise ValueError(f"export_config: {unknown[0]!r} is not an option of {where} in torch {_torch_version()}")
    # torch.export.export's own options reach the capture on the run (EngineOptions.export_kwargs).
    with _config.patch(**{name: value for name, value in options.items() if name not in EXPORT_KWARGS}):
        yield


def _available(option: str, dynamic_shapes: Any = None) -> bool:
    """Whether this torch offers ``option`` (export refuses deferred asserts with a ShapesSpec)."""
    if option == ADDITIONAL_INPUTS:
        import torch

        from exportcore.shapes.shapes_spec import is_shapes_spec

        return hasattr(torch.export, "AdditionalInputs") and not is_shapes_spec(dynamic_shapes)
    if option in EXPORT_KWARGS:
        import inspect

        import torch

        from exportcore.shapes.shapes_spec import is_shapes_spec

        return option in inspect.signature(torch.export.export).parameters and not is_shapes_spec(dynamic_shapes)
    try:
        from torch.fx.experimental import _config
    except ImportError:  # pragma: no cover - every supported torch has it
        return False
    return hasattr(_config, option)


def _code(option: str) -> str:
    marker = f"@pytest.mark.exportable(..., export_config={{{option!r}: True}})\n"
    if option in EXPORT_KWARGS:
        return (marker + "# or in your own export call:\n"
                f"ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes, {option}=True)")
    return (marker + "# or around your own export call:\n"
            f"with torch.fx.experimental._config.patch({option}=True):\n"
            f"    ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes)")


def _torch_version() -> str:
    import torch

    return str(torch.__version__)
