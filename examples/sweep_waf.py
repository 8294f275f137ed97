"""WAF against over-provisioning for greedy, FIFO and cost-benefit GC on uniform and hot/cold
random writes, beside Desnoyers' closed-form model (the `waf_model` of each uniform run:
greedy and FIFO on uniform random single-page writes; no closed form is claimed for the rest).

    pip install '.[ray,pandas]' matplotlib        # from the repository root
    python examples/sweep_waf.py --out waf.jsonl --jobs 2 --plot waf.png
    python examples/sweep_waf.py --out waf.jsonl --ray 127.0.0.1:6379   # on a Ray cluster

The sweep resumes from --out: rerun it after an interruption and only the missing runs run.
In a notebook: `rows = flashlab.sweep(SPEC, "waf.jsonl", jobs=2)` then `flashlab.to_frame(rows)`.
"""

import argparse

import flashlab

SPEC = {
    "name": "waf-op-gc",
    "seeds": 2,
    "base": {"capacity": "256MiB", "timing": "off", "write_volume": "2x", "precondition": "full:2"},
    "vary": {
        "op": [0.07, 0.1, 0.14, 0.2, 0.28, 0.4],
        "gc": ["greedy", "fifo", "cost-benefit"],
        "workload": ["uniform-write", "hotcold-write:0.8:0.2"],
    },
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="sweep_waf.jsonl")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS")
    p.add_argument("--capacity", default=None, help="override the device size (e.g. 64MiB for a quick look)")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="save a plot (needs matplotlib)")
    a = p.parse_args()
    spec = dict(SPEC, base=dict(SPEC["base"]))
    if a.capacity:
        spec["base"]["capacity"] = a.capacity
    rows = flashlab.sweep(spec, a.out, jobs=a.jobs, ray=a.ray)
    df = flashlab.to_frame(rows)
    df = df[df["status"] == "ok"]
    table = (df.groupby(["workload", "gc", "op"])[["waf", "waf_model"]].mean().reset_index())
    print(table.to_string(index=False))
    if a.plot:
        plot(table, a.plot)


def plot(table, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(table["workload"]))
    fig, axes = plt.subplots(1, len(workloads), figsize=(5 * len(workloads), 4), sharey=True)
    model = table[(table["workload"] == "uniform-write")].dropna(subset=["waf_model"])
    for ax, w in zip(axes, workloads):
        for gc, g in table[table["workload"] == w].groupby("gc"):
            ax.plot(g["op"], g["waf"], "o-", label=f"{gc} (measured)")
        for gc, g in model.groupby("gc"):
            ax.plot(g["op"], g["waf_model"], "k--" if gc == "greedy" else "k:",
                    label=f"{gc}: model (uniform)")
        ax.set_title(w)
        ax.set_xlabel("over-provisioning")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("write amplification")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
