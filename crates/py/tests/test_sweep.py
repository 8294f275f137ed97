"""`flashlab sweep` on local workers: rows as runs finish, resume after a kill, failed runs
recorded with the CLI's message, and the Python API's sweep the same as the command's."""

import json
import os
import signal
import subprocess
import time

import pytest

import flashlab
from conftest import TINY, strip_wall

SPEC = """
name = "t"
seeds = 2
[base]
capacity = "32MiB"
timing = "off"
write_volume = "1x"
[vary]
op = [0.07, 0.14, 0.28]
gc = ["greedy", "fifo"]
"""


def rows_of(path):
    return flashlab.read_results(path)


def by_hash(rows):
    return {r["config_hash"]: r for r in rows}


def comparable(row):
    return {k: strip_wall(v) for k, v in row.items() if k not in ("pid", "host", "wall_seconds")}


def sweep(flashlab_bin, spec, out, *more):
    return subprocess.run([flashlab_bin, "sweep", str(spec), "--out", str(out), *more],
                          capture_output=True, text=True)


def test_a_sweep_runs_the_grid_once_and_summarises(flashlab_bin, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out = tmp_path / "r.jsonl"
    p = sweep(flashlab_bin, spec, out, "--jobs", "2")
    assert p.returncode == 0, p.stderr
    rows = rows_of(out)
    assert len(rows) == 3 * 2 * 2 and len(by_hash(rows)) == 12
    assert all(r["status"] == "ok" for r in rows)
    # Each row: its effective config (given and default options) and its result, which is
    # the CLI's JSON for the same options.
    r = rows[0]
    assert r["config"]["capacity"] == "32MiB" and r["config"]["precondition"] == "full"
    one = flashlab.sim(**{k: r["config"][k] for k in ("capacity", "timing", "write_volume", "op", "gc", "seed")})
    assert strip_wall(r["result"]) == strip_wall(one)
    assert "gc" in p.stdout and "waf (mean)" in p.stdout and "12 of 12 runs ok" in p.stdout
    # A second run has nothing left to do.
    p = sweep(flashlab_bin, spec, out, "--jobs", "2")
    assert p.returncode == 0 and "12 finished" in p.stderr and "0 to run" in p.stderr
    assert len(rows_of(out)) == 12


def test_a_killed_sweep_resumes_without_rerunning_or_losing_runs(flashlab_bin, tmp_path):
    spec = tmp_path / "s.toml"
    # Runs long enough that the kill lands mid-sweep: a 512 MiB device written about three
    # times over, ~400,000 page writes a run (48 MiB runs took 2 ms once the simulator's
    # timeline stopped building a histogram per sample, and the sweep ended before the kill).
    spec.write_text(SPEC.replace('"32MiB"', '"512MiB"').replace("seeds = 2", "seeds = 4"))
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen([flashlab_bin, "sweep", str(spec), "--out", str(out), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or len(rows_of(out)) < 3):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = rows_of(out)
    assert 3 <= len(before) < 24, "the kill landed mid-sweep"
    # A row cut by the kill is dropped and its run runs again.
    with open(out, "a") as f:
        f.write('{"sweep":"t","config_hash":"cut')
    p = sweep(flashlab_bin, spec, out)
    assert p.returncode == 0, p.stderr
    assert "dropped a cut last line" in p.stderr
    after = rows_of(out)
    assert len(after) == 24 and len(by_hash(after)) == 24, "each run once"
    first_pid = before[0]["pid"]
    assert sum(r["pid"] == first_pid for r in after) == len(before), "finished runs not re-run"
    # Resumed results are those of an uninterrupted sweep.
    whole = tmp_path / "whole.jsonl"
    assert sweep(flashlab_bin, spec, whole, "--jobs", "2", "--quiet").returncode == 0
    w = by_hash(rows_of(whole))
    assert {h: comparable(r) for h, r in by_hash(after).items()} == {h: comparable(r) for h, r in w.items()}


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(flashlab_bin, tmp_path):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"base": TINY, "vary": {"gc": ["greedy", "bogus"]}}))
    out = tmp_path / "r.jsonl"
    p = sweep(flashlab_bin, spec, out)
    assert p.returncode == 0, p.stderr
    rows = {r["vary"]["gc"]: r for r in rows_of(out)}
    assert rows["greedy"]["status"] == "ok"
    bad = rows["bogus"]
    assert bad["status"] == "error" and "result" not in bad
    with pytest.raises(flashlab.FlashlabError) as e:
        flashlab.sim(**TINY, gc="bogus")
    assert bad["error"] == str(e.value) == "--gc bogus: expected greedy, cost-benefit or fifo"
    assert "1 failed" in p.stdout and "failed: run 1 (gc=bogus)" in p.stdout
    # Failed runs stay recorded on resume, and run again with --retry-failed.
    assert "1 finished" not in sweep(flashlab_bin, spec, out).stderr
    p = sweep(flashlab_bin, spec, out, "--retry-failed")
    assert "1 to run" in p.stderr and len(rows_of(out)) == 3


def test_a_bad_spec_is_refused_before_anything_runs(flashlab_bin, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[base]\ncapacity = "32MiB"\n[vary]\nopp = [0.1]\n')
    out = tmp_path / "r.jsonl"
    p = sweep(flashlab_bin, spec, out)
    assert p.returncode == 2
    assert "unexpected argument '--opp' found" in p.stderr and str(spec) in p.stderr
    assert not out.exists()


def test_the_python_sweep_is_the_command_s(flashlab_bin, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    cli_out, py_out = tmp_path / "cli.jsonl", tmp_path / "py.jsonl"
    assert sweep(flashlab_bin, spec, cli_out, "--quiet").returncode == 0
    rows = flashlab.sweep(spec, py_out, jobs=2, progress=False)
    assert len(rows) == 12
    assert ({h: comparable(r) for h, r in by_hash(rows).items()}
            == {h: comparable(r) for h, r in by_hash(rows_of(cli_out)).items()})
    # The spec as a dict is the same sweep (same hashes), named `sweep`.
    d = {"seeds": 2, "base": dict(TINY), "vary": {"op": [0.07, 0.14, 0.28], "gc": ["greedy", "fifo"]}}
    again = flashlab.sweep(d, py_out, progress=False)
    assert by_hash(again).keys() == by_hash(rows).keys()
    pandas = pytest.importorskip("pandas")
    df = flashlab.to_frame(py_out)
    assert {"op", "gc", "seed", "waf", "waf_model", "status", "config_hash", "config.capacity"} <= set(df.columns)
    assert len(df) == 12


def test_ray_missing_says_how_to_install(tmp_path):
    """Without Ray, --ray says `pip install flashlab[ray]` (Ray hidden from this Python)."""
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    code = ("import sys; sys.modules['ray'] = None; from flashlab import ray_sweep; "
            f"sys.exit(ray_sweep.main([{str(spec)!r}, '--out', {str(tmp_path / 'r.jsonl')!r}]))")
    p = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 2
    assert "pip install flashlab[ray]" in p.stderr


def test_ray_without_the_package_says_how_to_install(flashlab_bin, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    p = sweep(flashlab_bin, spec, tmp_path / "r.jsonl", "--ray", "--python", "/bin/false")
    assert p.returncode == 2 and "pip install flashlab[ray]" in p.stderr
