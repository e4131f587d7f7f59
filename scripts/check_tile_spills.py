#!/usr/bin/python3
"""Checks that the inner loops of the AVX2 int8 GEMM tiles keep their accumulators in registers.

    /usr/bin/python3 scripts/check_tile_spills.py BUILD_DIR [SOURCE...]

GCC's register allocation of these tiles is fragile: an inlined store, a lambda around a tile or
an unrelated branch beside it has moved accumulators to the stack (a load and a store beside
every vpaddd, the kernel 10-30% slower) without changing a result, so no other test notices.
This compiles each source (default: the AVX2 int8 panel kernels and the Winograd products) to assembly with its own command
from BUILD_DIR/compile_commands.json, finds every loop (a label and a later conditional jump back
to it, no label between: an innermost loop) with at least 4 vpmaddubsw/vpmaddwd, and fails if such a loop reads or writes a YMM
register through the stack (%rsp/%rbp). Exit status 0: none; 1: some (listed); 2: usage or
compile error."""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

DEFAULT = ["kernels/int8/qgemm_bytes_avx2.cpp", "kernels/int8/qgemm_avx2.cpp", "kernels/int8/qwinograd_avx2.cpp"]
MULT = re.compile(r"\bvpmadd(ubsw|wd)\b")
STACK_YMM = re.compile(r"%ymm\d+.*\(%r[sb]p\)|\(%r[sb]p\).*%ymm\d+")
LABEL = re.compile(r"^(\.L\w+):")
JUMP = re.compile(r"^\s+j\w+\s+(\.L\w+)\s*$")
FUNC = re.compile(r"^([A-Za-z_]\w*):")


def demangle(name):
    if not name:
        return "(an unnamed function)"
    try:
        return subprocess.run(["c++filt", name], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return name


def loops(lines):
    """(function, label, body lines) of every innermost loop: a label and a jump back to it with
    no other label between (one basic block, as the tiles' k loops compile)."""
    func, label, start = None, None, 0
    for i, line in enumerate(lines):
        m = FUNC.match(line)
        if m:
            func, label = m.group(1), None
            continue
        m = LABEL.match(line)
        if m:
            label, start = m.group(1), i
            continue
        m = JUMP.match(line)
        if m and m.group(1) == label:
            yield func, label, lines[start + 1:i]


def check(source, entry, root):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "tile.s")
        cmd, skip = [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a == "-o":
                skip = True
                continue
            cmd.append(a)
        cmd += ["-S", "-o", out]
        r = subprocess.run(cmd, cwd=entry.get("directory", root), capture_output=True, text=True)
        if r.returncode != 0:
            print(f"check_tile_spills: compiling {source} failed:\n{r.stderr}", file=sys.stderr)
            sys.exit(2)
        lines = open(out).read().split("\n")
    bad, counted = [], 0
    for func, label, body in loops(lines):
        if sum(1 for l in body if MULT.search(l)) < 4:
            continue
        counted += 1
        spills = [l.strip() for l in body if STACK_YMM.search(l)]
        if spills:
            bad.append((func, label, spills))
    return counted, bad


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = sys.argv[2:] or DEFAULT
    try:
        db = json.load(open(os.path.join(build, "compile_commands.json")))
    except OSError as e:
        print(f"check_tile_spills: {e}", file=sys.stderr)
        return 2
    failed = False
    for src in sources:
        path = os.path.normpath(os.path.join(root, src))
        entry = next((e for e in db if os.path.normpath(os.path.join(e.get("directory", ""), e["file"])) == path), None)
        if entry is None:
            print(f"check_tile_spills: {src} is not in {build}/compile_commands.json", file=sys.stderr)
            return 2
        counted, bad = check(src, entry, root)
        if counted == 0:
            print(f"check_tile_spills: {src}: no tile loop found (the check no longer sees the kernels)", file=sys.stderr)
            return 1
        for func, label, spills in bad:
            failed = True
            print(f"{src}: {demangle(func)} loop {label}: YMM through the stack:")
            for s in spills[:6]:
                print(f"    {s}")
        print(f"check_tile_spills: {src}: {counted} tile loops, {len(bad)} with stack traffic")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
