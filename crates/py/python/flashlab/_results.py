"""Results as objects: each is the dict the CLI's ``--json`` prints (so ``r["waf"]``,
``json.dumps(r)`` and comparisons with dicts work as before) whose keys also read as
attributes (``r.waf``, ``r.latency_us.p99``), with ``to_dict()`` and ``to_frame()``."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping, Union


def _wrap(value: Any) -> Any:
    if isinstance(value, Mapping) and not isinstance(value, Record):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _flatten(prefix: str, value: Any, into: dict) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, into)
    else:
        into[prefix] = value


def frame(records: Iterable[Mapping[str, Any]]):
    """A pandas DataFrame of flat records (nested keys dotted: ``latency_us.p99``)."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame() needs pandas, which is not installed: "
                          "pip install pandas (or pip install 'flashlab[pandas]')") from None
    flat = []
    for r in records:
        row: dict = {}
        _flatten("", r, row)
        flat.append(row)
    return pandas.DataFrame.from_records(flat)


class Record(dict):
    """A JSON object whose keys read as attributes too; nested objects are Records."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for k, v in self.items():
            dict.__setitem__(self, k, _wrap(v))

    @classmethod
    def from_json(cls, text: str):
        return cls(json.loads(text))

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no key {name!r}; "
                                 f"its keys: {', '.join(self)}") from None

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | {k for k in self if k.isidentifier()})

    #: The keys a repr shows first.
    _headline: tuple = ()

    def __repr__(self) -> str:
        keys = [k for k in self._headline if k in self] + [k for k in self
                                                           if k not in self._headline]
        scalars = [f"{k}={self[k]!r}" for k in keys
                   if not isinstance(self[k], (Mapping, list)) and len(repr(self[k])) <= 40]
        shown = ", ".join(scalars[:10]) + (", ..." if len(self) > 10 else "")
        return f"{type(self).__name__}({shown})"

    def to_dict(self) -> dict:
        """The result as plain dicts and lists: the JSON object the CLI prints."""
        return _plain(self)

    def to_frame(self):
        """A one-row pandas DataFrame (nested keys dotted: ``latency_us.p99``)."""
        return frame([self])


class SimResult(Record):
    """What ``flashlab sim --json`` prints: ``waf``, ``waf_model``, ``host_pages_written``,
    ``flash_pages_written``, ``latency_us`` (``p50``, ``p99``, ...), ``timeline``, ``notes``..."""

    __slots__ = ()
    _headline = ("waf", "waf_model", "host_pages_written", "flash_pages_written", "erases",
                 "ftl", "gc_policy", "op", "workload", "seed")

    def timeline_frame(self):
        """The WAF and latency sampled over the measured phase, one row per sample."""
        return frame(self.get("timeline") or [])


class BufferSimResult(Record):
    """What ``flashlab buffer-sim --json`` prints (hit ratios, I/O counts, cost)."""

    __slots__ = ()


class Report(Record):
    """What ``flashlab reproduce NAME --json`` prints: ``experiment``, ``scale``, ``seed``,
    ``config``, ``rows`` (measured), ``paper`` (the paper's figures), ``claims``, ``notes``."""

    __slots__ = ()
    _headline = ("experiment", "scale", "seed")

    def to_frame(self, table: str = "rows"):
        """One of the report's tables as a DataFrame: ``rows`` (default), ``paper`` or
        ``claims``."""
        if table not in ("rows", "paper", "claims"):
            raise ValueError(f"table {table!r}: expected 'rows', 'paper' or 'claims'")
        return frame(self.get(table) or [])


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


def _is_sweep_row(r: Mapping[str, Any]) -> bool:
    return "config_hash" in r and ("result" in r or "error" in r) and "vary" in r


class SweepRows(list):
    """A sweep's rows (the JSON lines of its results file, as Records)."""

    def to_frame(self):
        """One row per run: varied options, result keys, status, ``config.*``."""
        return to_frame(self)

    def to_dict(self) -> list:
        return _plain(self)


def to_frame(results: Union[str, os.PathLike, Mapping[str, Any], Iterable[Mapping[str, Any]]]):
    """A pandas DataFrame of results: a sweep's JSON-lines file or its rows, a report from
    ``reproduce`` (its ``rows``), or ``sim`` results (nested keys dotted)."""
    from . import read_results

    if isinstance(results, (str, os.PathLike)):
        results = read_results(results)
    if isinstance(results, Mapping):
        results = results["rows"] if "rows" in results else [results]
    return frame(_row_record(r) if _is_sweep_row(r) else r for r in results)
