"""``flashlab sweep SPEC --ray [ADDRESS]``: each pending run of the sweep a Ray task that
calls the flashlab package on its worker; rows appended to the same JSON-lines file as the
local sweep writes, as they come back.

No row is lost or written twice when a worker dies: a task whose worker process dies is run
again by Ray (``max_retries``), and the driver writes a task's row once, when its result
arrives. A task that fails past its retries is recorded as a failed run, with Ray's error.
A killed driver resumes like a local sweep (rows already in the file are not run again).

Run as ``python -m flashlab.ray_sweep SPEC --out FILE [--address HOST:PORT]`` (what the
``flashlab`` binary does for ``--ray``), or through ``flashlab.sweep(..., ray=...)``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Optional

from . import _native
from ._native import FlashlabError

INSTALL_HINT = "pip install flashlab[ray]"
#: Ray re-runs a task this many times when its worker process dies.
MAX_RETRIES = 3
#: Seconds between progress lines.
PROGRESS_EVERY = 5.0


def _import_ray():
    try:
        import ray
    except ImportError as e:
        raise FlashlabError(
            f"--ray needs Ray, which this Python ({sys.executable}) cannot import ({e}): "
            f"{INSTALL_HINT}"
        ) from None
    return ray


def run_ticket(ticket: str) -> str:
    """A Ray task's body: run one ticket with the worker's flashlab; its row as JSON text."""
    from flashlab import _native as native

    return native.sweep_run(ticket)


def _progress_line(done: int, total: int, started: float) -> str:
    secs = time.monotonic() - started
    if total and done:
        frac = min(done / total, 1.0)
        eta = secs * (1 - frac) / frac
        return f"sweep: {done}/{total} runs ({100 * frac:.0f} %), {secs:.0f} s, ETA {eta:.0f} s"
    return f"sweep: {done} runs, {secs:.0f} s"


def run(spec: str, out: str, address: Optional[str] = None, retry_failed: bool = False,
        progress: bool = True, is_json: bool = False) -> str:
    """Run the sweep's pending runs on Ray; returns the summary table."""
    ray = _import_ray()
    plan = json.loads(_native.sweep_plan(spec, is_json, out, retry_failed))
    if progress:
        print(plan["headline"], file=sys.stderr)
    tickets = [json.dumps(t) for t in plan["tickets"]]
    if tickets:
        if not ray.is_initialized():
            try:
                ray.init(address=address, log_to_driver=False,
                         **({} if address else {"include_dashboard": False}))
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = address or "ray.init()'s default (RAY_ADDRESS, else a new local cluster)"
                raise FlashlabError(f"--ray {where}: {e} (is a Ray cluster running there? "
                                    "`ray start --head` starts one)") from None
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(run_ticket)
        pending = {task.remote(t): t for t in tickets}
        started = last = time.monotonic()
        done = 0
        with open(out, "a", encoding="utf-8") as f:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    ticket = pending.pop(ref)
                    try:
                        row = ray.get(ref)
                    except ray.exceptions.RayError as e:
                        row = _native.sweep_error_row(ticket, f"Ray task failed: {e}")
                    f.write(row + "\n")
                    f.flush()
                    done += 1
                now = time.monotonic()
                if progress and (now - last >= PROGRESS_EVERY or not pending):
                    last = now
                    print(_progress_line(done, len(tickets), started), file=sys.stderr)
    return _native.sweep_summary(spec, is_json, out)


def main(argv: Optional[list] = None) -> int:
    p = argparse.ArgumentParser(prog="flashlab sweep --ray",
                                description="Run a flashlab sweep on Ray.")
    p.add_argument("spec")
    p.add_argument("--out", required=True)
    p.add_argument("--address", default=None)
    p.add_argument("--retry-failed", action="store_true")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    try:
        summary = run(a.spec, a.out, address=a.address, retry_failed=a.retry_failed,
                      progress=not a.quiet)
    except FlashlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(summary, end="")
    return 0


if __name__ == "__main__":
    # Run through the imported module, so Ray pickles `run_ticket` by reference
    # (flashlab.ray_sweep.run_ticket), not as a function of __main__.
    from flashlab import ray_sweep

    sys.exit(ray_sweep.main())
