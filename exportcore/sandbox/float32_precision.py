"""Whether float32 math on a device may run below float32 precision (TF32, bf16 passes), and a block without it.

On CUDA, ``torch.backends.cudnn.allow_tf32`` is on by default: float32 convolutions (and their
backward) round their inputs to TF32's 10-bit mantissa. Eager and the exported program then both
sit far from a float64 run (resnet18's conv1 weight grad in training mode on an H200, 28 Nov: 1.31
at values up to 10) and from each other beyond float32's tolerances where their kernels round at
other points; the numerics check, which forgives rounding only against a float64 run eager float32
is within rounding of (compare.rounding), blamed the correct program. A mismatch there is now
judged on eager and the program run again inside ``full_float32()`` (exportcore.programs.parity).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Iterator

from exportcore.sandbox.backend_flags import BackendFlags, matmul_precision, precision_flags, read_flag, write_flag

__all__ = ["full_float32", "reduced_float32"]

#: Legacy switches per device type: True lets float32 math run in TF32.
_LEGACY = {"cuda": ("cuda.matmul.allow_tf32", "cudnn.allow_tf32")}
#: The fp32_precision backends (torch >= 2.9) per device type; "generic" applies to all.
_BACKENDS = {"cuda": ("generic", "cuda"), "cpu": ("generic", "mkldnn")}
_FULL = ("ieee", "none")  # "none": inherit the parent's setting, read on its own key


def reduced_float32(device_type: str) -> tuple[str, ...]:
    """Return the settings that let float32 math on ``device_type`` run below float32 precision (empty: none)."""
    found: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a legacy flag warns about the newer API
        precision = matmul_precision()
        if device_type == "cuda" and precision not in ("highest", None):  # None: the switches below say
            found.append(f"torch.get_float32_matmul_precision() == {precision!r}")
        for path in _LEGACY.get(device_type, ()):
            try:
                if read_flag(path) is True:
                    found.append(f"torch.backends.{path}")
            except Exception:  # noqa: BLE001 - absent in this torch, or unreadable in a mixed state
                continue
        for name, (getter, _) in precision_flags().items():
            if name.split(".")[1] not in _BACKENDS.get(device_type, ()):
                continue
            try:
                value = getter()
            except Exception:  # noqa: BLE001
                continue
            if value not in _FULL:
                found.append(f"torch.backends {name.removeprefix('precision.')} fp32_precision {value!r}")
    return tuple(found)


@contextmanager
def full_float32() -> Iterator[None]:
    """Run the block with float32 math at full precision on every device; every switch is put back after."""
    import torch

    flags, matmul = BackendFlags.capture(), matmul_precision()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.set_float32_matmul_precision("highest")
            for paths in _LEGACY.values():
                for path in paths:
                    try:
                        write_flag(path, False)
                    except Exception:  # noqa: BLE001 - absent in this torch
                        continue
            for _, setter in precision_flags().values():
                try:
                    setter("ieee")
                except Exception:  # noqa: BLE001 - a key this torch does not take "ieee" for
                    continue
        yield
    finally:
        flags.restore()  # before the matmul precision, which is a view of the same setting
        if matmul is not None and matmul_precision() != matmul:
            torch.set_float32_matmul_precision(matmul)
