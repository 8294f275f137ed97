"""The example notebook (examples/waf_sweep.ipynb) runs from top to bottom: a sweep, its
frame, a plot, and its own checks of the figures."""

import shutil

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "examples" / "waf_sweep.ipynb"
NEEDS = "the notebook test needs nbclient, nbformat, ipykernel, matplotlib and pandas " \
        "(.ci/more-tests installs them: pip install nbclient nbformat ipykernel matplotlib pandas)"


def test_the_example_notebook_runs(tmp_path):
    for module in ("nbclient", "nbformat", "ipykernel", "matplotlib", "pandas"):
        pytest.importorskip(module, reason=NEEDS)
    import nbformat
    from nbclient import NotebookClient

    work = tmp_path / NOTEBOOK.name
    shutil.copy(NOTEBOOK, work)
    nb = nbformat.read(work, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plot was drawn"
    assert any("text/html" in o.get("data", {}) for o in outputs), "a frame was shown"
    assert (tmp_path / "waf.jsonl").exists(), "the sweep wrote its rows"
