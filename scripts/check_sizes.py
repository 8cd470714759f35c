#!/usr/bin/env python3
"""Check that no source file and no function in src/ has grown past what a reader can hold.

    scripts/check_sizes.py [SRC]

A file over MAX_FILE_LINES or a function over MAX_FUNCTION_LINES is a module or a step that wants
splitting along its seams (docs/ARCHITECTURE.md). Functions are found as the kernel style writes
them: the opening brace alone at the start of a line, the closing one likewise. Generated code
lives under the build directory and is not read. Exits 0 when clean, 1 with a line per problem.
"""
import os
import re
import sys

MAX_FILE_LINES = 1200
MAX_FUNCTION_LINES = 150

NAME = re.compile(r"(\w+)\s*\(")


def check_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    problems = []
    if len(lines) > MAX_FILE_LINES:
        problems.append(f"{path}: {len(lines)} lines (at most {MAX_FILE_LINES}): split it")
    start = name = None
    for i, line in enumerate(lines):
        if line == "{":
            start = i
            j = i - 1
            while j > 0 and not NAME.search(lines[j]):
                j -= 1
            m = NAME.search(lines[j]) if j >= 0 else None
            name = m.group(1) if m else "?"
        elif line == "}" and start is not None:
            n = i - start + 1
            if n > MAX_FUNCTION_LINES:
                problems.append(
                    f"{path}:{start + 1}: {name}() is {n} lines (at most {MAX_FUNCTION_LINES})"
                )
            start = None
    return problems


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    problems = []
    for root, _, names in os.walk(src):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                problems += check_file(os.path.join(root, n))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
