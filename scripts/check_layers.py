#!/usr/bin/python3
"""Checks the tree's layering: which top-level folders may include which, and that library code
never prints.

    /usr/bin/python3 scripts/check_layers.py [ROOT]

Layers (docs/architecture.md): core stands on nothing of the project; dsl, kernels and cache stand
on core; engine on those; cli, python, tests, bench and examples on top. Inside engine, rewrite and
exec do not include dsl/: they run rules as data (core/pattern), lowered by the front end. An `#include "X/..."` from
a folder to one it may not use is reported with file:line. Library folders (core, dsl, kernels,
cache, engine) must not write to stdout/stderr themselves: diagnostics are returned to the caller
or go through the logger (core/util/log.h), whose sink a host can set. Exit 1 on any finding.
"""
import os
import re
import sys

ALLOWED = {
    "core": {"core"},
    "dsl": {"core", "dsl"},
    "kernels": {"core", "kernels"},
    "cache": {"core", "cache"},
    "engine": {"core", "dsl", "kernels", "cache", "engine", "fusor"},  # fusor/: include/fusor, the public API
}
# Finer rules inside a folder: the rewrite engine and the executor run rules as data
# (core/pattern) and never see the rule language's AST (dsl/ lowers it).
FORBIDDEN = {
    os.path.join("engine", "rewrite"): {"dsl"},
    os.path.join("engine", "exec"): {"dsl"},
}
LIBRARY = set(ALLOWED)
# The one place allowed to print: the logger's default sink.
PRINT_OK = {os.path.join("core", "util", "log.cpp")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
PRINT = re.compile(r'std::(cerr|cout|clog)\b|\b(printf|puts|perror)\s*\(|\bf(printf|puts|write)\s*\(.*\bstd(err|out)\b')


def strip_comment(line):
    i = line.find("//")
    return line if i < 0 else line[:i]


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = []
    for top in sorted(ALLOWED):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) not in ALLOWED[top] and m.group(1) in ALLOWED.keys() | {"cli", "python", "tests", "bench"}:
                            problems.append("%s:%d: %s/ includes %s/ (a layer above it or beside it)" % (rel, n, top, m.group(1)))
                        for sub, banned in FORBIDDEN.items():
                            if m and rel.startswith(sub + os.sep) and m.group(1) in banned:
                                problems.append("%s:%d: %s/ includes %s/ (it runs rules as data, core/pattern)" % (rel, n, sub, m.group(1)))
                        code = strip_comment(line)
                        if rel not in PRINT_OK and PRINT.search(code):
                            problems.append("%s:%d: library code prints (return a diagnostic or use the logger)" % (rel, n))
    for p in problems:
        print(p)
    if problems:
        print("check_layers: %d problem(s)" % len(problems), file=sys.stderr)
        return 1
    print("check_layers: layers ok (core <- dsl, kernels, cache <- engine <- cli, python), no library file prints")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
