#!/usr/bin/env python3
"""compare-results.py OLD_DIR NEW_DIR: every JSON output identical at the same seed, timing keys aside.
Keys whose names say they are wall-clock or process measurements are skipped (see TIMING)."""
import json, os, re, sys
TIMING = re.compile(r"(bytes_per_logical_page|memory_bytes_process|wall|elapsed|host_s|_ms_wall|rss|peak_mem|cpu|took|duration_s$|refs_per_s|ops_per_s_wall|machine|commit|date|version|hostname|load)", re.I)
def walk(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if TIMING.search(k):
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'new' if k in b else 'base'}")
                continue
            walk(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r} vs {b!r}")
base, new = sys.argv[1], sys.argv[2]
bad = 0
for f in sorted(os.listdir(base)):
    if not f.endswith(".json"):
        continue
    try:
        a = json.load(open(os.path.join(base, f)))
    except Exception as e:
        print(f"{f}: base unreadable ({e})"); continue
    try:
        b = json.load(open(os.path.join(new, f)))
    except Exception as e:
        print(f"{f}: new unreadable ({e})"); bad += 1; continue
    # Outputs from before issue 20 have no "claims"; where both have them they are compared.
    if isinstance(a, dict) and isinstance(b, dict) and "claims" not in a:
        b.pop("claims", None)
    out = []
    walk(a, b, f, out)
    if out:
        bad += 1
        print(f"{f}: {len(out)} differences"); [print("  " + o) for o in out[:15]]
    else:
        print(f"{f}: identical")
sys.exit(1 if bad else 0)
