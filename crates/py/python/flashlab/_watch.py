"""Options as the native module takes them, and a run's progress: a tqdm bar where tqdm is
installed (``tqdm.auto``: a widget in Jupyter with ipywidgets, text in a terminal), else a
line on stderr every few seconds, or the caller's own callable."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Mapping, Optional, Union

PathArg = Union[str, "os.PathLike[str]"]
#: ``True`` (a bar), ``False`` (none) or ``callable(phase, pages_done, pages_total)``.
ProgressArg = Union[bool, Callable[[str, int, Optional[int]], Any]]


def _options(given: Mapping[str, Any], names: tuple) -> dict:
    """The spec's options among a function's arguments: those not None, paths as text."""
    out = {}
    for name in names:
        value = given[name]
        if value is None:
            continue
        out[name] = os.fspath(value) if isinstance(value, os.PathLike) else value
    return out


class TextProgress:
    """A line on stderr at most every ``every_s`` seconds (none for a shorter run)."""

    def __init__(self, unit: str = "page", every_s: float = 5.0, stream=None):
        self.unit = unit
        self.every_s = every_s
        self.stream = stream or sys.stderr
        self.last = time.monotonic()

    def __call__(self, phase: str, done: int, total: Optional[int]) -> None:
        now = time.monotonic()
        if now - self.last >= self.every_s:
            share = f" ({100 * done / total:.0f} %)" if total else ""
            of = f" of {total:,}" if total is not None else ""
            print(f"{phase}: {done:,}{of} {self.unit}s{share}", file=self.stream, flush=True)
            self.last = now

    def close(self) -> None:
        pass


class BarProgress:
    """One tqdm bar per phase (a new one where the phase's total changes), counting pages,
    references, steps or runs."""

    def __init__(self, tqdm, unit: str = "page"):
        self.tqdm = tqdm
        self.unit = unit
        self.bar: Any = None
        self.phase: Optional[str] = None

    def __call__(self, phase: str, done: int, total: Optional[int]) -> None:
        if phase != self.phase or (self.bar is not None and self.bar.total != total):
            self.close()
            self.phase = phase
            self.bar = self.tqdm(total=total, desc=phase, unit=self.unit, unit_scale=True,
                                 leave=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def progress_for(progress: ProgressArg, unit: str = "page"):
    """The callback for a ``progress`` argument: None, the caller's callable, or a bar."""
    if progress is False or progress is None:
        return None
    if callable(progress) and progress is not True:
        return progress
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return TextProgress(unit)
    return BarProgress(tqdm, unit)


def _watched(native: Callable[..., str], progress: ProgressArg, options: dict, *args: Any,
             unit: str = "page") -> str:
    """``native(*args, progress=callback, **options)``, the bar closed however the run ends."""
    callback = progress_for(progress, unit)
    try:
        return native(*args, progress=callback, **options)
    finally:
        close_bar(callback)


def close_bar(callback) -> None:
    """Close a bar :func:`progress_for` made (not the caller's own callable)."""
    if isinstance(callback, (TextProgress, BarProgress)):
        callback.close()
