"""The Python API as a notebook user meets it: signatures with every option of the run specs,
stubs and the generated module in sync, `__version__`, results as objects with `to_frame()`,
progress, and Ctrl-C stopping a run."""

import ast
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import flashlab
from flashlab import _codegen, _native, _watch
from conftest import ROOT, TINY

PACKAGE = Path(flashlab.__file__).parent
TOOLS = {"sim": flashlab.sim, "buffer_sim": flashlab.buffer_sim, "reproduce": flashlab.reproduce}
#: Parameters the package adds to a tool's spec options.
ADDED = {"sim": {"progress"}, "buffer_sim": {"progress"}, "reproduce": {"name", "progress"}}
PY_TYPES = {"bool": "bool", "int": "int", "float": "float", "str": "str", "path": "PathArg"}


def spec(tool):
    return json.loads(_native.spec_options(tool))


@pytest.mark.parametrize("tool", TOOLS)
def test_every_spec_option_is_a_keyword_parameter(tool):
    params = inspect.signature(TOOLS[tool]).parameters
    fields = set(spec(tool)["fields"])
    missing = fields - set(params)
    assert not missing, f"spec options missing from flashlab.{tool}: {sorted(missing)} " \
                        "(run python -m flashlab._codegen)"
    assert set(params) - fields == ADDED[tool], "parameters that are no spec option"
    for name in fields:
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("tool", TOOLS)
def test_parameters_carry_the_spec_s_types_defaults_and_help(tool):
    params = inspect.signature(TOOLS[tool]).parameters
    doc = inspect.getdoc(TOOLS[tool])
    for opt in spec(tool)["options"]:
        p = params[opt["name"]]
        typ = PY_TYPES[opt["type"]]
        optional = opt["type"] != "bool" and opt["default"] is None and not opt["required"]
        assert p.annotation == (f"Optional[{typ}]" if optional else typ), opt["name"]
        if opt["required"]:
            assert p.default is inspect.Parameter.empty, opt["name"]
        else:
            default = opt["default"] if opt["type"] != "bool" else bool(opt["default"])
            assert p.default == default, opt["name"]
        assert f"\n{opt['name']} : " in doc, opt["name"]
        assert " ".join(_codegen.help_text(opt).split()[:6]) in " ".join(doc.split()), opt["name"]
    sim_help = {o["name"]: o for o in spec("sim")["options"]}
    assert sim_help["op"]["type"] == "float" and sim_help["seed"]["default"] == 1
    assert sim_help["check_invariants"]["type"] == "bool"
    trace = inspect.signature(flashlab.buffer_sim).parameters["trace"]
    assert trace.default is inspect.Parameter.empty and trace.annotation == "PathArg"


def test_the_generated_module_is_what_the_specs_give():
    text = (PACKAGE / "_api.py").read_text(encoding="utf-8")
    assert text == _codegen.generate(), "flashlab/_api.py is stale: run python -m flashlab._codegen"


def test_a_spec_option_left_out_of_the_signature_fails_the_check(monkeypatch):
    """The check above can fail: a spec with one option more gives another module."""
    real = _native.spec_options

    def with_one_more(tool):
        s = json.loads(real(tool))
        s["fields"].append("new_option")
        s["options"].append(dict(name="new_option", type="int", default=None, help="New.",
                                 value_name=None, required=False))
        return json.dumps(s)

    monkeypatch.setattr(_native, "spec_options", with_one_more)
    generated = _codegen.generate()
    assert "new_option: Optional[int] = None" in generated
    assert generated != (PACKAGE / "_api.py").read_text(encoding="utf-8")


def stub_functions():
    tree = ast.parse((PACKAGE / "_native.pyi").read_text(encoding="utf-8"))
    return {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}


def test_native_stubs_match_the_module():
    stubs = stub_functions()
    native = {n for n in dir(_native) if callable(getattr(_native, n)) and not n.startswith("_")
              and n != "FlashlabError"}
    assert set(stubs) == native
    for name, f in stubs.items():
        stub_params = [a.arg for a in f.args.args] + ([f.args.kwarg.arg] if f.args.kwarg else [])
        real = list(inspect.signature(getattr(_native, name)).parameters)
        assert stub_params == real, name


def test_the_package_is_typed_and_versioned():
    assert (PACKAGE / "py.typed").exists()
    cargo = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    version = re.search(r'\[workspace\.package\][^\[]*?version = "([^"]+)"', cargo).group(1)
    assert flashlab.__version__ == version
    assert "__version__" in flashlab.__all__


def test_the_package_and_a_caller_type_check(tmp_path):
    """mypy reads the package's types (py.typed): a clean check, and a caller's misspelt option
    is an error before anything runs."""
    pytest.importorskip("mypy", reason="mypy is not installed (.ci/more-tests installs it)")
    caller = tmp_path / "caller.py"
    caller.write_text("import flashlab\n"
                      "r = flashlab.sim(capacity='64MiB', op=0.28, progress=False)\n"
                      "waf: float = r.waf\n"
                      "df = flashlab.reproduce('ioa-ftl').to_frame('claims')\n"
                      "flashlab.sim(capacity='64MiB', wirte_volume='2x')\n")
    run = [sys.executable, "-m", "mypy", "--no-incremental", "--ignore-missing-imports"]
    package = subprocess.run(run + ["-p", "flashlab"], capture_output=True, text=True,
                             cwd=tmp_path)
    assert package.returncode == 0, package.stdout
    user = subprocess.run(run + [str(caller)], capture_output=True, text=True, cwd=tmp_path)
    assert user.returncode == 1
    assert user.stdout.count("error:") == 1
    assert 'Unexpected keyword argument "wirte_volume" for "sim"' in user.stdout


def test_unknown_options_are_a_type_error():
    with pytest.raises(TypeError, match="bogus_flag"):
        flashlab.sim(**dict(TINY, bogus_flag=1))
    with pytest.raises(TypeError, match="json"):
        flashlab.sim(json=True)


def test_paths_may_be_path_objects(tmp_path):
    trace = tmp_path / "refs.txt"
    trace.write_text("R 1\nW 2\nR 1\n")
    a = flashlab.buffer_sim(trace=trace, trace_format="text", size=2)
    b = flashlab.buffer_sim(trace=str(trace), trace_format="text", size=2)
    assert a.references == b.references == 3


def test_results_read_as_attributes_and_stay_the_cli_s_dict():
    r = flashlab.sim(**dict(TINY, seed=3), progress=False)
    assert isinstance(r, flashlab.SimResult) and isinstance(r, dict)
    assert r.waf == r["waf"] and r.latency_us.p99 == r["latency_us"]["p99"]
    assert "waf" in dir(r) and "waf=" in repr(r)
    plain = r.to_dict()
    assert type(plain) is dict and type(plain["latency_us"]) is dict
    assert json.loads(json.dumps(r)) == plain
    with pytest.raises(AttributeError, match="no key 'wav'"):
        r.wav


def test_to_frame_gives_pandas_frames():
    pandas = pytest.importorskip("pandas")
    r = flashlab.sim(**dict(TINY, seed=3), progress=False)
    df = r.to_frame()
    assert isinstance(df, pandas.DataFrame) and len(df) == 1
    assert df["waf"][0] == r.waf and df["latency_us.p99"][0] == r.latency_us.p99
    t = r.timeline_frame()
    assert len(t) == len(r.timeline) and "waf_cumulative" in t.columns
    report = flashlab.reproduce("ioa-ftl", scale="quick")
    assert isinstance(report, flashlab.Report)
    assert len(report.to_frame()) == len(report.rows)
    assert len(report.to_frame("claims")) == len(report.claims)
    with pytest.raises(ValueError, match="'rows', 'paper' or 'claims'"):
        report.to_frame("bogus")


def test_to_frame_without_pandas_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    r = flashlab.sim(**TINY, progress=False)
    with pytest.raises(ImportError, match=r"to_frame\(\) needs pandas.*pip install pandas"):
        r.to_frame()


def test_progress_reports_each_phase_to_its_total():
    calls = []
    flashlab.sim(**TINY, progress=lambda phase, done, total: calls.append((phase, done, total)))
    phases = [c[0] for c in calls]
    assert phases[0] == "precondition" and phases[-1] == "measure"
    for phase in ("precondition", "measure"):
        mine = [c for c in calls if c[0] == phase]
        assert [d for _, d, _ in mine] == sorted(d for _, d, _ in mine)
        assert mine[-1][1] == mine[-1][2], f"{phase} ends at its total"


def test_an_exception_in_the_progress_callback_stops_the_run():
    calls = []

    def fail(phase, done, total):
        calls.append(phase)
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        flashlab.sim(**TINY, progress=fail)
    assert calls == ["precondition"], "the run stopped at the first report"
    assert flashlab.sim(**TINY, progress=False).waf > 1.0, "a run after a stopped one runs"


def test_progress_without_tqdm_is_text_on_stderr(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    bar = _watch.progress_for(True)
    assert isinstance(bar, _watch.TextProgress)
    import io

    bar.stream, bar.every_s = io.StringIO(), 0.0
    bar("measure", 500, 1000)
    assert bar.stream.getvalue() == "measure: 500 of 1,000 pages (50 %)\n"
    assert _watch.progress_for(False) is None


def test_progress_with_tqdm_is_a_bar():
    tqdm = pytest.importorskip("tqdm")
    bar = _watch.progress_for(True)
    assert isinstance(bar, _watch.BarProgress)
    flashlab.sim(**TINY)  # the default: a bar, closed at the end


def default_sigint():
    """In the child: SIGINT at its default action, so Python installs its KeyboardInterrupt
    handler even where this test runs with SIGINT ignored (a background job of a
    non-interactive shell, as CI scripts run under `nohup ... &`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


INTERRUPTED = textwrap.dedent("""
    import sys, flashlab
    def started(phase, done, total):
        print("running", flush=True)
    try:
        flashlab.sim(capacity="1GiB", timing="off", write_volume="200x", progress=started)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(42)
    print("finished", flush=True)
""")


def test_ctrl_c_stops_a_running_simulation():
    """SIGINT while the run is in Rust: it stops and KeyboardInterrupt reaches the caller."""
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED], stdout=subprocess.PIPE,
                             text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                             preexec_fn=default_sigint)
    assert child.stdout.readline() == "running\n"
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 42, out
    assert out.splitlines()[-1] == "KeyboardInterrupt"


def test_a_sweep_reports_each_run(tmp_path):
    calls = []
    spec = {"base": TINY, "vary": {"seed": [1, 2, 3]}}
    rows = flashlab.sweep(spec, tmp_path / "s.jsonl", progress=lambda *a: calls.append(a))
    assert calls == [("sweep", 1, 3), ("sweep", 2, 3), ("sweep", 3, 3)]
    assert isinstance(rows, flashlab.SweepRows) and len(rows.to_frame()) == 3


SWEEP_INTERRUPTED = textwrap.dedent("""
    import sys, flashlab
    def row(phase, done, total):
        print("row", flush=True)
    spec = {"base": {"capacity": "512MiB", "timing": "off", "write_volume": "2x"},
            "vary": {"seed": list(range(1, 31))}}
    try:
        flashlab.sweep(spec, sys.argv[1], jobs=1, progress=row)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(42)
    print("finished", flush=True)
""")


def test_ctrl_c_stops_a_local_sweep_with_its_file_whole(tmp_path):
    out = tmp_path / "s.jsonl"
    child = subprocess.Popen([sys.executable, "-c", SWEEP_INTERRUPTED, str(out)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             preexec_fn=default_sigint)
    assert child.stdout.readline() == "row\n"
    child.send_signal(signal.SIGINT)
    stdout, _ = child.communicate(timeout=600)
    assert child.returncode == 42, stdout
    rows = flashlab.read_results(out)
    assert 1 <= len(rows) < 30, "stopped after the run in flight"
    assert out.read_text().endswith("\n") and all(r.status == "ok" for r in rows)


def test_reproduce_reports_its_steps_to_their_total():
    calls = []
    r = flashlab.reproduce("fdp", jobs=1, progress=lambda *a: calls.append(a))
    assert r.experiment == "fdp"
    assert {c[0] for c in calls} == {"steps"}
    total = calls[0][2]
    assert total > 1 and all(c[2] == total for c in calls)
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)
    assert calls[-1][1] == total, "the last step finished"


def test_buffer_sim_reports_each_pass_to_its_end(tmp_path):
    trace = tmp_path / "refs.txt"
    trace.write_text("".join(f"R {i % 900}\n" for i in range(200_000)))
    calls = []
    r = flashlab.buffer_sim(trace=trace, trace_format="text", size="4%",
                            progress=lambda *a: calls.append(a))
    assert r.references == 200_000
    assert [c[0] for c in calls][0] == "count" and calls[-1] == ("simulate", 200_000, 200_000)
    assert ("count", 65_536, None) in calls, "a count every 65,536 references"


def test_an_exception_in_a_reproduce_callback_stops_it():
    calls = []

    def fail(phase, done, total):
        calls.append(done)
        raise ValueError("stop the experiment")

    with pytest.raises(ValueError, match="stop the experiment"):
        flashlab.reproduce("fdp", jobs=1, progress=fail)
    assert len(calls) == 1, "no call after the exception"


def interrupted(call: str) -> str:
    """A child that runs `call` (reporting to `started`), exits 42 on KeyboardInterrupt and
    prints the last progress it saw."""
    return textwrap.dedent(f"""
        import sys, flashlab
        seen = []
        def started(phase, done, total):
            # Recorded before "running" is printed: the parent's SIGINT follows that line, so
            # the interrupt always finds a report in `seen`, wherever it lands.
            seen.append((phase, done, total))
            if len(seen) == 1:
                print("running", flush=True)
        try:
            {call}
        except KeyboardInterrupt:
            print("KeyboardInterrupt", seen[-1], flush=True)
            sys.exit(42)
        print("finished", flush=True)
    """)


@pytest.mark.parametrize("call", [
    'flashlab.reproduce("multistream", jobs=1, progress=started)',
    'flashlab.reproduce("ioa-ftl", jobs=2, progress=started)',
    'flashlab.buffer_sim(trace="warehouses=2,transactions=50000000,seed=1", trace_format="tpcc",'
    ' progress=started)',
], ids=["reproduce-serial", "reproduce-parallel", "buffer_sim"])
def test_ctrl_c_stops_reproduce_and_buffer_sim(call):
    """SIGINT while the experiment (or buffer-sim) is in Rust: it stops at its next check and
    KeyboardInterrupt reaches the caller, before the run's end."""
    child = subprocess.Popen([sys.executable, "-c", interrupted(call)], stdout=subprocess.PIPE,
                             text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                             preexec_fn=default_sigint)
    assert child.stdout.readline() == "running\n"
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 42, out
    last = out.splitlines()[-1]
    assert last.startswith("KeyboardInterrupt"), out
    phase, done, total = ast.literal_eval(last.split(" ", 1)[1])
    assert total is None or done < total, f"stopped before the end: {last}"
