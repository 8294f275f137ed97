"""flashlab from Python: the engine of the ``flashlab`` command line, not a re-implementation.

Keyword arguments are the CLI's long flags with ``-`` as ``_``; values as on the command line
or as numbers; ``True`` gives a flag, ``None`` or ``False`` leaves it out::

    import flashlab
    r = flashlab.sim(capacity="256MiB", op=0.28, timing="off", write_volume="1x", seed=3)
    r["waf"], r["waf_model"]

Each result is the JSON object ``flashlab sim --json`` (``buffer-sim --json``,
``reproduce NAME --json``) prints, as a dict. A refused or failed run raises
:class:`FlashlabError` with the CLI's message. Runs release the GIL.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from . import _native
from ._native import FlashlabError

__all__ = [
    "FlashlabError",
    "sim",
    "buffer_sim",
    "reproduce",
    "presets",
    "sweep",
    "read_results",
    "to_frame",
]


def sim(**options: Any) -> dict:
    """One ``flashlab sim`` run: the object ``flashlab sim --json`` prints."""
    return json.loads(_native.sim(**options))


def buffer_sim(**options: Any) -> dict:
    """One ``flashlab buffer-sim`` run: the object ``flashlab buffer-sim --json`` prints."""
    return json.loads(_native.buffer_sim(**options))


def reproduce(name: str, **options: Any) -> dict:
    """A paper's experiment, e.g. ``reproduce("ioa-ftl", scale="quick")``: the report
    ``flashlab reproduce NAME --json`` prints (``rows`` measured, ``paper`` the paper's)."""
    return json.loads(_native.reproduce(name, **options))


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
    progress: bool = True,
) -> list:
    """Run a sweep as ``flashlab sweep SPEC --out OUT`` does and return its rows.

    ``spec`` is a spec file (TOML or JSON) or the spec as a dict (``{"base": {...}, "vary":
    {...}}``). Rows are appended to ``out`` (JSON lines) as runs finish; a sweep resumes from
    ``out``. ``ray=True`` (``ray.init()``'s choice) or ``ray="HOST:PORT"`` runs each run as a
    Ray task (``pip install flashlab[ray]``); else ``jobs`` local threads. The summary table
    goes to stderr when ``progress``.
    """
    text, is_json = _spec_arg(spec)
    out = os.fspath(out)
    if ray is not None and ray is not False:
        from . import ray_sweep

        address = None if ray is True else str(ray)
        summary = ray_sweep.run(text, out, address=address, retry_failed=retry_failed,
                                progress=progress, is_json=is_json)
    else:
        summary = _native.sweep_local(text, is_json, out, jobs, retry_failed, progress)
    if progress:
        print(summary, file=sys.stderr, end="")
    hashes = set(json.loads(_native.sweep_plan(text, is_json, out, retry_failed))["hashes"])
    return [r for r in read_results(out) if r.get("config_hash") in hashes]


def read_results(path: Union[str, os.PathLike]) -> list:
    """The rows of a sweep's JSON-lines file (a cut last line is skipped)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n") and line.strip():
                rows.append(json.loads(line))
    return rows


def _flatten(prefix: str, value: Any, into: dict) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, into)
    else:
        into[prefix] = value


def _row_record(row: Mapping[str, Any]) -> dict:
    """A sweep row as flat columns: the varied options first (``op``, ``gc``, ``seed``), then
    the result's keys (nested ones dotted: ``latency_us.p99``; a key that a varied option
    already names gets ``result.``), then ``status``, ``error``, ``config_hash``, ... and the
    effective config as ``config.NAME``."""
    rec: dict = dict(row.get("vary", {}))
    result: dict = {}
    _flatten("", row.get("result") or {}, result)
    for k, v in result.items():
        rec[f"result.{k}" if k in rec else k] = v
    for k in ("status", "error", "config_hash", "sweep", "index", "command", "wall_seconds",
              "host", "pid"):
        if k in row:
            rec[k if k not in rec else f"row.{k}"] = row[k]
    for k, v in (row.get("config") or {}).items():
        rec[f"config.{k}"] = v
    return rec


def to_frame(results: Union[str, os.PathLike, Mapping[str, Any], Iterable[Mapping[str, Any]]]):
    """A pandas (else polars) DataFrame of results: a sweep's JSON-lines file or its rows, a
    report from :func:`reproduce` (its ``rows``), or ``sim`` results (nested keys dotted)."""
    if isinstance(results, (str, os.PathLike)):
        results = read_results(results)
    if isinstance(results, Mapping):
        results = results["rows"] if "rows" in results else [results]
    records = []
    for r in results:
        if "config_hash" in r and ("result" in r or "error" in r) and "vary" in r:
            records.append(_row_record(r))
        else:
            flat: dict = {}
            _flatten("", r, flat)
            records.append(flat)
    try:
        import pandas

        return pandas.DataFrame.from_records(records)
    except ImportError:
        pass
    try:
        import polars

        return polars.from_dicts(records)
    except ImportError:
        raise ImportError("to_frame needs pandas or polars: pip install flashlab[pandas]") from None
