"""with-statements in forward: grad modes, autocast, user context managers, locks."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="no_grad_context",
    tags=("python.context-manager",),
    description="""
    torch.no_grad() in forward exports in every mode; in the training export the block is
    recorded as a grad-disabled region.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            with torch.no_grad():
                scale = x.abs().max()
            return x / (scale + 1)

    return M(), (torch.randn(4),)


@case(
    name="autocast_region",
    tags=("python.context-manager", "dtype"),
    description="""
    torch.autocast("cpu", dtype=torch.bfloat16) around a matmul. Non-strict and training
    exports record the autocast region and match eager. In strict mode capture succeeds,
    but the graph asserts float32 on the region's bfloat16 result: ep.module() raises a
    dtype mismatch on the example inputs (torch 2.15), and run_decompositions() trips over
    the same assertion. Export non-strict, or cast explicitly (`x.bfloat16() @ w.bfloat16()`).
    """,
    expect={"strict": Fails("python.context-manager", stage="run")},
    rewrite="explicit_bf16_cast",
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, w):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y = x @ w
            return y.float().relu()

    return M(), (torch.randn(2, 3), torch.randn(3, 4))


@case(
    name="explicit_bf16_cast",
    tags=("dtype",),
    description="""
    The explicit form of an autocast region: cast the operands to bfloat16, compute, cast
    back. Same numbers as autocast on CPU, no context manager to capture.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, w):
            y = x.bfloat16() @ w.bfloat16()
            return y.float().relu()

    return M(), (torch.randn(2, 3), torch.randn(3, 4))


@case(
    name="user_class_context_manager",
    tags=("python.context-manager", "python.object-model"),
    description="""
    A user-defined class with __enter__/__exit__ that only touches Python state (a
    nesting counter) is traced through in every mode.
    """,
)
def _():
    import torch

    class Depth:
        level = 0

        def __enter__(self):
            Depth.level += 1
            return self

        def __exit__(self, *exc):
            Depth.level -= 1
            return False

    class M(torch.nn.Module):
        def forward(self, x):
            with Depth():
                return x * 2

    return M(), (torch.randn(3),)


@case(
    name="contextlib_contextmanager",
    tags=("python.context-manager", "python.standard-library"),
    description="""
    A generator-based @contextlib.contextmanager that yields a value is supported by
    strict (dynamo inlines the generator) and by non-strict.
    """,
)
def _():
    import contextlib

    import torch

    @contextlib.contextmanager
    def scaled(k):
        yield k

    class M(torch.nn.Module):
        def forward(self, x):
            with scaled(3.0) as k:
                return x * k

    return M(), (torch.randn(3),)


@case(
    name="lock_context_manager",
    tags=("python.context-manager",),
    description="""
    `with threading.Lock():` in forward: strict (dynamo) does not know this context manager
    and fails; non-strict runs it as plain Python. Take locks around the call to the
    model, not inside forward.
    """,
    expect={"strict": Fails("python.context-manager")},
    rewrite="contextlib_contextmanager",
)
def _():
    import threading

    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lock = threading.Lock()

        def forward(self, x):
            with self.lock:
                return x * 2

    return M(), (torch.randn(3),)


@case(
    name="set_grad_enabled_false",
    tags=("python.context-manager", "training"),
    description="""
    torch.set_grad_enabled(False) used as a context manager: strict export passes, but in
    non-strict and training mode the region becomes a wrap_with_set_grad_enabled node
    without the metadata the serializer's verifier needs, so torch.export.save fails
    (torch 2.14). torch.no_grad() does the same job and serializes.
    """,
    expect={"non_strict": Fails("serialization", stage="serialize"),
            "training": Fails("serialization", stage="serialize")},
    rewrite="no_grad_region",
)
def _():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 3)

        def forward(self, x):
            with torch.set_grad_enabled(False):
                target = self.fc(x).detach()
            return self.fc(x) - target.mean()

    return M(), (torch.randn(2, 3),)


@case(
    name="record_function_profiler",
    tags=("python.context-manager",),
    description="""
    Profiler annotations (torch.autograd.profiler.record_function) are accepted and
    dropped from the exported program.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            with torch.autograd.profiler.record_function("block"):
                return x.relu() + 1

    return M(), (torch.randn(3),)
