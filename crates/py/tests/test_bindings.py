"""The bindings run the CLI's engine: the same options give the same JSON, bit for bit (but
wall-clock keys), and the same refusals give the same messages."""

import json
import random
import subprocess
import threading

import pytest

import flashlab
from conftest import TINY, cli_flags, strip_wall

CASES = [
    dict(TINY, seed=3),
    dict(TINY, op=0.28, gc="fifo", seed=7),
    dict(TINY, op=0.14, gc="cost-benefit", workload="hotcold-write:0.8:0.2", seed=2),
    dict(TINY, workload="zipf-write:0.99", request_size="16KiB", precondition="fill"),
    dict(capacity="32MiB", timing="on", queue_depth=4, write_volume="0.5x", ftl="dftl",
         cmt_entries=512),
    dict(TINY, ftl="fast", log_blocks=3, check_invariants=True),  # what a 32 MiB device's spare blocks hold
]


def cli_json(flashlab_bin, *argv):
    out = subprocess.run([flashlab_bin, *argv, "--json", "--quiet"], check=True,
                         capture_output=True, text=True).stdout
    assert out.endswith("\n") and out.count("\n") == 1, "exactly one JSON object"
    return json.loads(out)


@pytest.mark.parametrize("options", CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_sim_equals_the_cli_json(flashlab_bin, options):
    py = flashlab.sim(**options)
    cli = cli_json(flashlab_bin, "sim", *cli_flags(options))
    assert set(py) == set(cli)
    assert strip_wall(py) == strip_wall(cli)
    assert py["waf"] is not None and py["waf"] > 1.0


def test_numbers_and_their_text_are_the_same_run():
    a = flashlab.sim(**dict(TINY, op=0.28, seed=5))
    b = flashlab.sim(**dict(TINY, op="0.28", seed="5"))
    assert strip_wall(a) == strip_wall(b)


def test_buffer_sim_equals_the_cli_json(flashlab_bin, tmp_path):
    rng = random.Random(1)
    trace = tmp_path / "refs.txt"
    trace.write_text("".join(f"{'W' if rng.random() < 0.3 else 'R'} {int(rng.paretovariate(1.2)) % 400}\n"
                             for _ in range(4000)))
    options = dict(trace=str(trace), trace_format="text", policy="2q-flash", size=20, ext_size=60)
    py = flashlab.buffer_sim(**options)
    cli = cli_json(flashlab_bin, "buffer-sim", *cli_flags(options))
    assert strip_wall(py) == strip_wall(cli)
    assert py["references"] == 4000


def test_reproduce_equals_the_cli_json(flashlab_bin):
    py = flashlab.reproduce("ioa-ftl", scale="quick", seed=2)
    cli = cli_json(flashlab_bin, "reproduce", "ioa-ftl", "--scale", "quick", "--seed", "2")
    assert py["experiment"] == "ioa-ftl" and py["rows"]
    assert strip_wall(py) == strip_wall(cli)


def cli_error(flashlab_bin, *argv):
    p = subprocess.run([flashlab_bin, *argv], capture_output=True, text=True)
    assert p.returncode == 2, p
    first = p.stderr.splitlines()[0]
    assert first.startswith("error: ")
    return first[len("error: "):]


@pytest.mark.parametrize("options", [
    dict(TINY, gc="bogus"),
    dict(TINY, op="abc"),
    dict(TINY, write_volume="0x"),
    dict(TINY, capacity="12 parsecs"),
    dict(TINY, workload="trace:/nonexistent.csv"),
    dict(TINY, trace_timing=True),
    dict(TINY, preset="no-such-preset"),
])
def test_errors_raise_with_the_cli_message(flashlab_bin, options):
    with pytest.raises(flashlab.FlashlabError) as e:
        flashlab.sim(**options)
    assert str(e.value) == cli_error(flashlab_bin, "sim", *cli_flags(options))


def test_reproduce_errors_carry_the_cli_message(flashlab_bin):
    with pytest.raises(flashlab.FlashlabError) as e:
        flashlab.reproduce("no-such-experiment")
    assert str(e.value) == cli_error(flashlab_bin, "reproduce", "no-such-experiment")


def test_output_flags_and_odd_values_are_refused():
    with pytest.raises(flashlab.FlashlabError, match="--json shapes the command line's output"):
        flashlab._native.sim(json=True)
    with pytest.raises(flashlab.FlashlabError, match="unexpected argument '--bogus-flag' found"):
        flashlab._native.sim(bogus_flag=1)
    with pytest.raises(TypeError, match="option op: expected a string, a number or a boolean"):
        flashlab.sim(op=[0.1, 0.2])


def test_presets_are_the_cli_s(flashlab_bin):
    listed = subprocess.run([flashlab_bin, "presets"], check=True, capture_output=True,
                            text=True).stdout.split()
    presets = flashlab.presets()
    assert presets and all(name in listed for name in presets)
    assert all("geometry" in cfg and "ftl" in cfg for cfg in presets.values())


def test_runs_release_the_gil():
    """While a run is in Rust, other Python threads run (the GIL is released)."""
    done = threading.Event()
    ticks = 0

    def run():
        flashlab.sim(capacity="128MiB", timing="off", write_volume="2x", seed=1)
        done.set()

    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        ticks += 1
    t.join()
    assert ticks > 10_000, "the main thread barely ran during the simulation"


def test_to_frame_flattens_results():
    pandas = pytest.importorskip("pandas")
    rows = [flashlab.sim(**dict(TINY, seed=s)) for s in (1, 2)]
    df = flashlab.to_frame(rows)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["seed"]) == [1, 2]
    assert "latency_us.p99" in df.columns and "waf" in df.columns
