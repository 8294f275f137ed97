"""`flashlab sweep --ray` against a local Ray cluster this test starts on 127.0.0.1 (two CPUs):
the rows are the local sweep's, and killing a worker mid-sweep loses and duplicates nothing.

Skipped, with the reason shown (`pytest -rs`), only where Ray cannot be imported."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import flashlab
from conftest import strip_wall

try:
    import ray  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    pytest.skip(f"Ray is not installed in this Python ({e}); pip install flashlab[ray]",
                allow_module_level=True)

SPEC = """
name = "ray"
seeds = 4
[base]
capacity = "512MiB"
timing = "off"
write_volume = "2x"
[vary]
op = [0.1, 0.25]
gc = ["greedy", "fifo"]
"""
RUNS = 2 * 2 * 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Ray head on 127.0.0.1 with 2 CPUs, in a session of its own that teardown ends."""
    port = free_port()
    tmp = tmp_path_factory.mktemp("ray")
    ray_bin = Path(sys.executable).with_name("ray")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # Keep every Ray connection on the loopback: without this, Ray replaces 127.0.0.1 by the
    # machine's network address (its "multi-node cluster" mode; this switch turns it off).
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    # The test's own cluster, loopback only: no token authentication, whatever token a user's
    # ~/.ray/auth_token holds (Ray turns token auth on when that file exists, and a cluster and
    # a client that disagree on it cannot talk).
    env["RAY_AUTH_MODE"] = "disabled"
    head = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
         f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={tmp}"],
        stdout=open(tmp / "head.log", "w"), stderr=subprocess.STDOUT, env=env,
        start_new_session=True)
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if head.poll() is not None:
            pytest.fail(f"ray start exited: {(tmp / 'head.log').read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.5)
    else:
        pytest.fail("the Ray head did not listen within 90 s")
    yield address, env
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):
        try:
            os.killpg(head.pid, sig)
        except ProcessLookupError:
            break
        try:
            head.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def busy(pid: int) -> bool:
    """Whether the process is running (using CPU) now."""
    try:
        before = cpu_ticks(pid)
        time.sleep(0.1)
        return cpu_ticks(pid) > before
    except (FileNotFoundError, ProcessLookupError):
        return False


def by_hash(rows):
    return {r["config_hash"]: r for r in rows}


def comparable(row):
    return {k: strip_wall(v) for k, v in row.items() if k not in ("pid", "host", "wall_seconds")}


def test_a_ray_sweep_survives_a_killed_worker(flashlab_bin, cluster, tmp_path):
    address, env = cluster
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out = tmp_path / "ray.jsonl"
    env = dict(env, FLASHLAB_PYTHON=sys.executable)
    driver = subprocess.Popen(
        [flashlab_bin, "sweep", str(spec), "--out", str(out), "--ray", address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # Kill a worker that has returned a row, while it runs its next task (its CPU time grows).
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and driver.poll() is None:
        rows = flashlab.read_results(out) if out.exists() else []
        for pid in dict.fromkeys(r["pid"] for r in rows):
            if busy(pid):
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.02)
    stdout, stderr = driver.communicate(timeout=300)
    assert driver.returncode == 0, stderr
    assert killed is not None, "no busy worker was found to kill"
    assert not Path(f"/proc/{killed}").exists() or "zombie" in Path(f"/proc/{killed}/status").read_text()
    rows = flashlab.read_results(out)
    assert len(rows) == RUNS and len(by_hash(rows)) == RUNS, "no row lost or duplicated"
    assert all(r["status"] == "ok" for r in rows), [r.get("error") for r in rows]
    assert f"{RUNS} of {RUNS} runs ok" in stdout
    # The same rows as a local sweep (but pids, hosts and wall-clock keys).
    local = tmp_path / "local.jsonl"
    flashlab.sweep(spec, local, jobs=2, progress=False)
    assert ({h: comparable(r) for h, r in by_hash(rows).items()}
            == {h: comparable(r) for h, r in by_hash(flashlab.read_results(local)).items()})
    # Resume: nothing left to run.
    p = subprocess.run([flashlab_bin, "sweep", str(spec), "--out", str(out), "--ray", address],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0 and f"{RUNS} finished" in p.stderr and "0 to run" in p.stderr
