"""AOTInductor: compile the exported program to a .pt2 package of C++ kernels, load it, run it.

Input checks: an AOTInductor package checks its inputs' shapes against the exported
ranges only when ``AOTI_RUNTIME_CHECK_INPUTS=1`` is set when it is loaded. Deployments
that do not set it run any shape silently; the target checks the promise as the package
would be deployed: option ``check_inputs`` (default: the variable as set for this process).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from typing import Any, Iterator, Mapping

from exportcore.targets.base import Lowered, Runner, flat_tensors

__all__ = ["TARGET", "AOTInductor", "check_inputs_default"]

ENV = "AOTI_RUNTIME_CHECK_INPUTS"
_COMPILERS = ("g++", "c++", "clang++")


def check_inputs_default() -> bool:
    """Return whether packages are loaded with input checks when the user set nothing."""
    return os.environ.get(ENV, "0").strip() not in ("", "0", "false", "False")


class AOTInductor:
    """The ``aoti`` target."""

    name = "aoti"
    tolerance = (1e-4, 1e-4)
    unguarded_hint = ("AOTInductor checks input shapes only when AOTI_RUNTIME_CHECK_INPUTS=1 is set where the "
                      "package is loaded: set it there (and for this run), or validate shapes before calling it")

    def missing(self) -> str | None:
        """Return why AOTInductor cannot compile here: no inductor, or no working C++ compiler."""
        import importlib.util

        if importlib.util.find_spec("torch._inductor") is None:
            return "aoti: this torch has no torch._inductor (AOTInductor)"
        wanted = os.environ.get("CXX")
        candidates = [wanted] if wanted else list(_COMPILERS)
        for name in candidates:
            path = shutil.which(name) if name else None
            if path is None:
                continue
            try:
                done = subprocess.run([path, "--version"], capture_output=True, timeout=60, check=False)
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0:
                return None
        looked = f"$CXX={wanted!r}" if wanted else ", ".join(_COMPILERS)
        return (f"aoti: no working C++ compiler (looked for {looked}); AOTInductor compiles the model to C++: "
                "install g++ or set CXX")

    def unsupported_device(self, device: str) -> str | None:
        """Return None: AOTInductor compiles for the device the exported program's tensors are on."""
        return None

    def lower(self, ep: Any, args: tuple, kwargs: dict, workdir: str, options: Mapping[str, Any]) -> Lowered:
        """Compile ``ep`` with aoti_compile_and_package into ``workdir``/model.pt2."""
        import torch._inductor

        path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(workdir, "model.pt2"))
        return Lowered(path=str(path))

    def load(self, lowered: Lowered, ep: Any, options: Mapping[str, Any], device: str) -> Runner:
        """Load the package (input checks as ``options['check_inputs']`` says) and return its runner."""
        import torch
        import torch._inductor

        checks = options.get("check_inputs")
        checks = check_inputs_default() if checks is None else bool(checks)
        value = "1" if checks else "0"
        with _env(ENV, value):
            model = torch._inductor.aoti_load_package(lowered.path)

        def call(args: tuple, kwargs: dict) -> list:
            with torch.no_grad(), _env(ENV, value):
                return flat_tensors(model(*args, **kwargs))

        def run(args: tuple, kwargs: dict) -> list:
            try:
                return call(args, kwargs)
            except RuntimeError as exc:
                if "input_handles[" in str(exc) or "API call failed" not in str(exc):
                    raise
                # torch 2.8-2.12 print the input check's reason to the C++ stderr and raise only
                # "API call failed"; the check runs before any kernel, so calling again under a
                # captured fd 2 recovers the reason cheaply (and only on this failure path).
                reason = _stderr_of(call, args, kwargs)
                if reason is None:
                    raise
                raise RuntimeError(f"{reason} ({exc})") from exc

        return run

    def rejection(self, exc: BaseException) -> bool:
        """Return True for the package's own input check ("input_handles[0]: dim value is too large ...")."""
        text = str(exc)
        return isinstance(exc, RuntimeError) and "input_handles[" in text and (
            "dim value" in text or "expected" in text
        )


def _stderr_of(call: Any, args: tuple, kwargs: dict) -> str | None:
    """Return the runtime's input-check lines printed to fd 2 while ``call`` fails again, or None."""
    import tempfile

    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            call(args, kwargs)
        except RuntimeError:
            pass
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    lines = [line.strip().removeprefix("Error: ") for line in text.splitlines() if "input_handles[" in line]
    return "; ".join(lines) or None


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    # Measured: the runtime reads the variable when a call runs, not only when the package is loaded.
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


TARGET = AOTInductor()
