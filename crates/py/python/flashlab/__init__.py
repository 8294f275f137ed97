"""flashlab from Python: the engine of the ``flashlab`` command line, not a re-implementation.

``sim``, ``buffer_sim`` and ``reproduce`` take the CLI's long flags as keyword arguments (``-``
as ``_``), with their types, defaults and help (``help(flashlab.sim)``); numbers may also be
given as their text::

    import flashlab
    r = flashlab.sim(capacity="256MiB", op=0.28, timing="off", write_volume="1x", seed=3)
    r.waf, r.waf_model, r.latency_us.p99      # or r["waf"]: a result is also the CLI's dict
    r.to_frame()                              # a one-row pandas DataFrame

Each result is the JSON object ``flashlab sim --json`` (``buffer-sim --json``,
``reproduce NAME --json``) prints, as a dict whose keys read as attributes too, with
``to_dict()`` and ``to_frame()``. ``sim``, ``buffer_sim`` and ``reproduce`` show a progress
bar (``progress=False`` for none) and stop on Ctrl-C with KeyboardInterrupt. A refused or failed run raises
:class:`FlashlabError` with the CLI's message. Runs release the GIL.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Mapping, Union

from . import _native, _watch
from ._api import buffer_sim, reproduce, sim
from ._native import FlashlabError
from ._results import BufferSimResult, Record, Report, SimResult, SweepRows, to_frame

#: The package's version: the Rust workspace's (crates/py's Cargo version).
__version__: str = _native.__version__

__all__ = [
    "__version__",
    "FlashlabError",
    "sim",
    "buffer_sim",
    "reproduce",
    "presets",
    "sweep",
    "read_results",
    "to_frame",
    "Record",
    "SimResult",
    "BufferSimResult",
    "Report",
    "SweepRows",
]


def presets() -> dict:
    """The shipped SSD presets: name -> the whole configuration."""
    return json.loads(_native.presets())


Spec = Union[str, os.PathLike, Mapping[str, Any]]


def _spec_arg(spec: Spec) -> tuple[str, bool]:
    if isinstance(spec, Mapping):
        return json.dumps(spec), True
    return os.fspath(spec), False


def sweep(
    spec: Spec,
    out: Union[str, os.PathLike],
    jobs: int = 1,
    ray: Union[None, bool, str] = None,
    retry_failed: bool = False,
    progress: _watch.ProgressArg = True,
) -> SweepRows:
    """Run a sweep as ``flashlab sweep SPEC --out OUT`` does and return its rows.

    ``spec`` is a spec file (TOML or JSON) or the spec as a dict (``{"base": {...}, "vary":
    {...}}``). Rows are appended to ``out`` (JSON lines) as runs finish; a sweep resumes from
    ``out``. ``ray=True`` (``ray.init()``'s choice) or ``ray="HOST:PORT"`` runs each run as a
    Ray task (``pip install flashlab[ray]``); else ``jobs`` local threads. With ``progress``
    the plan's headline, a bar of runs (as ``sim``'s; a callable gets ``("sweep", runs_done,
    runs_to_run)``) and the summary table go to stderr. Ctrl-C stops a local sweep once its
    runs in flight are written (KeyboardInterrupt); it resumes from ``out``.
    """
    text, is_json = _spec_arg(spec)
    out = os.fspath(out)
    if ray is not None and ray is not False:
        from . import ray_sweep

        address = None if ray is True else str(ray)
        summary = ray_sweep.run(text, out, address=address, retry_failed=retry_failed,
                                progress=bool(progress), is_json=is_json)
    else:
        bar = _watch.progress_for(progress, unit="run")
        try:
            summary = _native.sweep_local(text, is_json, out, jobs, retry_failed, bool(progress),
                                          bar)
        finally:
            _watch.close_bar(bar)
    if progress:
        print(summary, file=sys.stderr, end="")
    hashes = set(json.loads(_native.sweep_plan(text, is_json, out, retry_failed))["hashes"])
    return SweepRows(r for r in read_results(out) if r.get("config_hash") in hashes)


def read_results(path: Union[str, os.PathLike]) -> SweepRows:
    """The rows of a sweep's JSON-lines file (a cut last line is skipped)."""
    rows = SweepRows()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n") and line.strip():
                rows.append(Record(json.loads(line)))
    return rows

