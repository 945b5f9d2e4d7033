"""Run the test suite and the main job on several torch releases, one venv each, and print one table.

    python tools/torch_matrix.py 2.6 2.10 2.14 2.15
    python tools/torch_matrix.py 2.6 --tests tests/test_classify.py   # a quicker subset

Per version: create (or reuse) ``<venvs>/torch-X.Y`` with that torch and the matching
torchvision from the package index, ``pip install -e .[test,examples]`` next to it (and
check the torch it found is still the one installed), run the test suite (``tests`` and
``exportdb``) and the main job of the README's first command (``pytest examples/``), each with a JSON export
report and JUnit XML under ``--out``. The table says, per version: tests passed/failed,
ExportDB drift (failing ``exportdb`` tests, by case), the main job's verdicts and wall time.
Runs serially, one version at a time, so it fits a small machine.

The pip configuration of this machine may cap torch; ``PIP_CONFIG_FILE=/dev/null`` is set for
the venvs' pip calls (``--keep-pip-config`` keeps it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: torch release -> the torchvision built against it (torchvision pins its torch exactly
#: up to 0.28; 0.29.2 requires torch >= 2.14 and is the newest on the index for 2.15).
PINS: dict[str, tuple[str, str]] = {
    "2.6": ("2.6.0", "0.21.0"),
    "2.7": ("2.7.1", "0.22.1"),
    "2.8": ("2.8.0", "0.23.0"),
    "2.9": ("2.9.1", "0.24.1"),
    "2.10": ("2.10.0", "0.25.0"),
    "2.11": ("2.11.0", "0.26.0"),
    "2.12": ("2.12.1", "0.27.1"),
    "2.13": ("2.13.0", "0.28.0"),
    "2.14": ("2.14.1", "0.29.1"),
    "2.15": ("2.15.0", "0.29.2"),
}


@dataclass
class Row:
    version: str
    torch: str = ""
    install: str = ""  # "torch kept" when pip install -e left the venv's torch alone
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    xfailed: int = 0
    drift: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    main_job: dict[str, int] = field(default_factory=dict)
    main_rc: int | None = None
    suite_rc: int | None = None
    wall_s: float = 0.0
    error: str = ""


def _pip_env(keep_config: bool) -> dict[str, str]:
    env = dict(os.environ)
    if not keep_config:
        env["PIP_CONFIG_FILE"] = os.devnull
        # A machine's local wheel folder may hold a CPU build of some torch (this one has 2.13.0+cpu):
        # pip prefers it, and PyPI's torchvision, built against PyPI's torch, then fails to load its ops.
        env.pop("PIP_FIND_LINKS", None)
    return env


def _run(cmd: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path = REPO) -> int:
    print(f"+ {' '.join(cmd)}  (log: {log})", flush=True)
    with log.open("a") as fh:
        fh.write(f"\n+ {' '.join(cmd)}\n")
        fh.flush()
        return subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode


def _torch_in(python: Path) -> str:
    if not python.exists():  # no venv yet (a first run, or one deleted to free disk)
        return ""
    proc = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _vision_works(python: Path) -> bool:
    """Whether torchvision's C++ ops load next to the venv's torch (they do not next to a mismatched build)."""
    code = "import torch, torchvision; torchvision.ops.nms(torch.zeros(1, 4), torch.zeros(1), 0.5)"
    if not python.exists():
        return False
    return subprocess.run([str(python), "-c", code], capture_output=True).returncode == 0


def ensure_venv(minor: str, venvs: Path, log: Path, keep_config: bool) -> tuple[Path, str]:
    """Return (python, install note) of a venv holding this torch and the project installed editable."""
    torch_v, vision_v = PINS[minor]
    venv = venvs / f"torch-{minor}"
    python = venv / "bin" / "python"
    env = _pip_env(keep_config)
    if _torch_in(python).split("+")[0] != torch_v or not _vision_works(python):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        rc = _run([str(python), "-m", "pip", "install", "-q", f"torch=={torch_v}", f"torchvision=={vision_v}"], log, env)
        if rc:
            raise RuntimeError(f"pip could not install torch=={torch_v} torchvision=={vision_v} (see {log})")
    before = _torch_in(python)
    rc = _run([str(python), "-m", "pip", "install", "-q", "-e", f"{REPO}[test,examples]"], log, env)
    after = _torch_in(python)
    if rc:
        raise RuntimeError(f"pip install -e .[test,examples] failed next to torch {before} (see {log})")
    note = "torch kept" if before == after else f"pip changed torch {before} -> {after}"
    return python, note


def _junit(path: Path, row: Row) -> None:
    if not path.exists():
        return
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        skipped = case.find("skipped")
        if "failure" in tags or "error" in tags:
            row.failed += 1
            row.failures.append(name)
            if name.startswith("exportdb.test_exportdb"):
                row.drift.append(case.get("name") or name)
        elif skipped is not None:
            if (skipped.get("type") or "") == "pytest.xfail":
                row.xfailed += 1
            else:
                row.skipped += 1
        else:
            row.passed += 1


def run_version(minor: str, args: argparse.Namespace) -> Row:
    """Build or reuse the venv for ``minor`` and run the suite and the main job in it."""
    row = Row(minor)
    out: Path = args.out
    log = out / f"torch-{minor}.log"
    started = time.monotonic()
    try:
        python, row.install = ensure_venv(minor, args.venvs, log, args.keep_pip_config)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        row.error = str(exc)
        return row
    row.torch = _torch_in(python)
    env = dict(os.environ, PYTHONPATH=str(REPO), CI="true")
    workers = ["-n", str(args.workers)] if args.workers else []
    if not args.skip_tests:
        junit = out / f"tests-{minor}.xml"
        row.suite_rc = _run([str(python), "-m", "pytest", *workers, "-q", "-p", "no:cacheprovider",
                             f"--junitxml={junit}", *args.tests], log, env)
        _junit(junit, row)
    if not args.skip_main:
        report = out / f"examples-{minor}.json"
        row.main_rc = _run([str(python), "-m", "pytest", "examples/", *workers, "-q", "-p", "no:cacheprovider",
                            f"--export-report={report}"], log, env)
        if report.exists():
            row.main_job = json.loads(report.read_text())["summary"]["verdicts"]
    row.wall_s = round(time.monotonic() - started, 1)
    return row


def table(rows: list[Row]) -> str:
    """Return the Markdown table docs/torch-versions.md shows ("The matrix")."""
    lines = ["| torch | tests passed | tests failed | ExportDB drift | main job (examples/) | wall time |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r.error:
            lines.append(f"| {r.version} | - | - | - | - | {r.error} |")
            continue
        tests = "not run" if r.suite_rc is None else str(r.passed) + (f" (+{r.xfailed} xfailed)" if r.xfailed else "")
        drift = "-" if r.suite_rc is None else (", ".join(r.drift) if r.drift else "none")
        main = "not run" if r.main_rc is None else ", ".join(f"{n} {v}" for v, n in r.main_job.items()) or "no records"
        lines.append(f"| {r.torch or r.version} | {tests} | {r.failed if r.suite_rc is not None else '-'} | {drift} "
                     f"| {main} | {r.wall_s / 60:.1f} min |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the matrix; exit 1 when any version failed a test, drifted or could not be set up."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", metavar="X.Y", help=f"torch minors, of {', '.join(PINS)}")
    parser.add_argument("--venvs", type=Path, default=Path(os.environ.get("TORCH_MATRIX_VENVS", "/work/venvs")),
                        help="where the per-version venvs live (default $TORCH_MATRIX_VENVS or /work/venvs)")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "torch-matrix", help="logs and reports")
    parser.add_argument("--tests", nargs="*", default=[], help="test paths (default: the project's testpaths)")
    parser.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers per run (0: serial)")
    parser.add_argument("--skip-tests", action="store_true", help="run only the main job")
    parser.add_argument("--skip-main", action="store_true", help="run only the test suite")
    parser.add_argument("--keep-pip-config", action="store_true", help="do not bypass this machine's pip config")
    args = parser.parse_args(argv)
    unknown = [v for v in args.versions if v not in PINS]
    if unknown:
        parser.error(f"unknown torch version(s) {unknown}; known: {', '.join(PINS)} (add a pin to PINS)")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for minor in args.versions:
        row = run_version(minor, args)
        rows.append(row)
        print(f"torch {minor}: {row.passed} passed, {row.failed} failed, drift {row.drift or 'none'}, "
              f"main job {row.main_job}, {row.install}, {row.wall_s:.0f} s {row.error}", flush=True)
        (args.out / "matrix.json").write_text(json.dumps([asdict(r) for r in rows], indent=1))
    text = table(rows)
    (args.out / "matrix.md").write_text(text + "\n")
    print(text)
    bad = [r for r in rows if r.error or r.failed or r.suite_rc not in (None, 0) or r.main_rc not in (None, 0)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
