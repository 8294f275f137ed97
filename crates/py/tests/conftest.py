"""Shared fixtures: the `flashlab` binary the Python results are compared with, a tiny
simulated device, and helpers that drop wall-clock keys (the only keys two runs may differ in)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: A device small enough for a run in well under a second.
TINY = {"capacity": "32MiB", "timing": "off", "write_volume": "1x"}


# Measurements of the process, not of the run: wall clock (any key with `wall` in its name) and
# resident memory (`peak_rss_bytes`, `bytes_per_logical_page`, `process_bytes_per_logical_page`).
PROCESS_KEYS = ("peak_rss_bytes", "bytes_per_logical_page", "process_bytes_per_logical_page")


def strip_wall(value):
    """`value` without the process's measurements (wall clock, resident memory), recursively."""
    if isinstance(value, dict):
        return {k: strip_wall(v) for k, v in value.items() if "wall" not in k and k not in PROCESS_KEYS}
    if isinstance(value, list):
        return [strip_wall(v) for v in value]
    return value


@pytest.fixture(scope="session")
def flashlab_bin() -> str:
    """The release binary (FLASHLAB_BIN, else target/release/flashlab, built if missing)."""
    path = os.environ.get("FLASHLAB_BIN") or str(ROOT / "target" / "release" / "flashlab")
    if not os.path.exists(path):
        subprocess.run(["cargo", "build", "--release", "-p", "flashlab"], cwd=ROOT, check=True)
    return path


def cli_flags(options: dict) -> list:
    """The command line for keyword options (as flashlab.sim takes them)."""
    argv = []
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            argv.append(flag)
        elif v is not False and v is not None:
            argv += [flag, str(v)]
    return argv
