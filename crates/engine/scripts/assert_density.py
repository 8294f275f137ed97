#!/usr/bin/env python3
"""Assertion density of non-test code: `assert!`/`assert_eq!`/`assert_ne!` (not debug_assert)
per `fn` definition, per module directory, outside `#[cfg(test)]` modules and test files.

Usage: python3 crates/engine/scripts/assert_density.py [DIR ...]
(default: crates/engine/src/kv crates/engine/src/pager)."""
import pathlib
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?fn\s+\w+")
ASSERT = re.compile(r"(?<![\w_])assert(_eq|_ne)?!")


def non_test_lines(path):
    lines = path.read_text().splitlines()
    out, skip_depth, depth, pending = [], None, 0, False
    for line in lines:
        s = line.strip()
        if skip_depth is None and s.startswith("#[cfg(test)]"):
            pending = True
            continue
        if pending and skip_depth is None:
            if s.startswith("mod ") and s.endswith(";"):
                pending = False  # `mod tests;` in its own file: skipped by name below
                continue
            if s.startswith("mod ") or s.startswith("fn ") or s.startswith("impl "):
                skip_depth = depth
            pending = False
        opens, closes = line.count("{"), line.count("}")
        if skip_depth is not None:
            depth += opens - closes
            if depth <= skip_depth:
                skip_depth = None
            continue
        depth += opens - closes
        if not s.startswith("//"):
            out.append(line)
    return out


def count(dirs):
    total_f = total_a = 0
    for d in dirs:
        fns = asserts = 0
        for path in sorted(pathlib.Path(d).rglob("*.rs")):
            if path.name == "tests.rs":
                continue
            lines = non_test_lines(path)
            f = sum(1 for l in lines if FN.match(l))
            a = sum(len(ASSERT.findall(l)) for l in lines)
            fns, asserts = fns + f, asserts + a
            print(f"  {str(path):55} fns {f:4}  asserts {a:4}")
        total_f, total_a = total_f + fns, total_a + asserts
        print(f"{d}: fns {fns}, asserts {asserts}, per fn {asserts / max(fns, 1):.2f}")
    print(f"total: fns {total_f}, asserts {total_a}, per fn {total_a / max(total_f, 1):.2f}")


if __name__ == "__main__":
    count(sys.argv[1:] or ["crates/engine/src/kv", "crates/engine/src/pager"])
