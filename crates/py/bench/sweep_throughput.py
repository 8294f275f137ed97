"""Sweep throughput and per-run overhead: 200 short `sim` runs (64 MiB, timing off, 1x after a
full precondition) with `flashlab sweep --jobs 1`, `--jobs 2` and `--ray` on a local 2-CPU Ray
cluster (started here on 127.0.0.1, stopped at the end); and one run through the bare CLI, the
Python binding and a Ray task, against the run's own time.

    python crates/py/bench/sweep_throughput.py [--runs 200] [--capacity 64MiB] [--flashlab target/release/flashlab]

A benchmark, not a test: run it once, by hand; the machine's load shows in the figures.
"""

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import flashlab

BASE = {"capacity": "64MiB", "timing": "off", "write_volume": "1x"}
OPS = [0.07, 0.1, 0.14, 0.2, 0.28]
GCS = ["greedy", "fifo"]


def spec_text(runs: int) -> str:
    seeds = max(1, runs // (len(OPS) * len(GCS)))
    base = "\n".join(f'{k} = "{v}"' for k, v in BASE.items())
    return (f'name = "bench"\nseeds = {seeds}\n[base]\n{base}\n[vary]\n'
            f"op = {json.dumps(OPS)}\ngc = {json.dumps(GCS)}\n")


def run_time(result: dict) -> float:
    """The run's own wall time, as the result reports it (precondition + measured phase)."""
    return result["precondition_wall_seconds"] + result["wall_seconds"]


def sweep(flashlab_bin: str, spec: Path, out: Path, *more: str, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run([flashlab_bin, "sweep", str(spec), "--out", str(out), "--quiet", *more],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def start_ray(tmp: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # Keep every Ray connection on the loopback: without this, Ray replaces 127.0.0.1 by the
    # machine's network address (its "multi-node cluster" mode; this switch turns it off).
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    head = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
         "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={tmp}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    for _ in range(180):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return head, f"127.0.0.1:{port}", env
        time.sleep(0.5)
    raise SystemExit("the Ray head did not start")


def stop_ray(head) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(head.pid, sig)
            head.wait(timeout=5)
            return
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue


def overheads(flashlab_bin: str, address: str, env, n: int = 20) -> dict:
    """Median seconds per run beyond the run's own time, by path."""
    opts = dict(BASE, op=0.14, seed=1)
    argv = [flashlab_bin, "sim", "--json", "--quiet"] + [f"--{k.replace('_', '-')}={v}" for k, v in opts.items()]
    cli, py, ray_ = [], [], []
    for _ in range(n):
        t0 = time.perf_counter()
        r = json.loads(subprocess.run(argv, check=True, capture_output=True).stdout)
        cli.append(time.perf_counter() - t0 - run_time(r))
        t0 = time.perf_counter()
        r = flashlab.sim(**opts, progress=False)
        py.append(time.perf_counter() - t0 - run_time(r))
    os.environ.update(env)  # the loopback-only switch, for this driver too (read at import)
    import ray

    ray.init(address=address, log_to_driver=False)
    task = ray.remote(num_cpus=1)(lambda o: flashlab.sim(**o, progress=False))
    ray.get(task.remote(opts))  # the first task starts a worker
    for _ in range(n):
        t0 = time.perf_counter()
        r = ray.get(task.remote(opts))
        ray_.append(time.perf_counter() - t0 - run_time(r))
    ray.shutdown()
    return {"bare CLI (process per run)": statistics.median(cli),
            "Python binding (flashlab.sim)": statistics.median(py),
            "Ray task (flashlab.sim on a worker)": statistics.median(ray_)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--capacity", default=BASE["capacity"], help="device size (larger: longer runs)")
    p.add_argument("--flashlab", default=str(Path(__file__).resolve().parents[3] / "target/release/flashlab"))
    a = p.parse_args()
    BASE["capacity"] = a.capacity
    tmp = Path(tempfile.mkdtemp(prefix="flashlab-bench-"))
    spec = tmp / "bench.toml"
    spec.write_text(spec_text(a.runs))
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {a.runs} runs of {BASE}")
    rows = []
    for label, more in (("--jobs 1", ["--jobs", "1"]), ("--jobs 2", ["--jobs", "2"])):
        out = tmp / f"{label.replace(' ', '')}.jsonl"
        secs = sweep(a.flashlab, spec, out, *more)
        rows.append((label, secs, out))
    head, address, env = start_ray(tmp / "ray")
    try:
        env = dict(env, FLASHLAB_PYTHON=sys.executable)
        out = tmp / "ray.jsonl"
        secs = sweep(a.flashlab, spec, out, "--ray", address, env=env)
        rows.append(("--ray (local cluster, 2 CPUs)", secs, out))
        over = overheads(a.flashlab, address, env)
    finally:
        stop_ray(head)
    print(f"| backend | runs | wall s | runs/min | mean run s (in row) |")
    print(f"|---|---|---|---|---|")
    for label, secs, out in rows:
        r = flashlab.read_results(out)
        assert all(x["status"] == "ok" for x in r) and len(r) == a.runs
        mean_run = statistics.mean(x["wall_seconds"] for x in r)
        print(f"| {label} | {len(r)} | {secs:.1f} | {len(r) / secs * 60:.0f} | {mean_run:.3f} |")
    print()
    print("| path | overhead per run, ms (median of 20, beyond the run's own time) |")
    print("|---|---|")
    for k, v in over.items():
        print(f"| {k} | {v * 1000:.1f} |")


if __name__ == "__main__":
    main()
