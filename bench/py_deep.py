# SPDX-License-Identifier: BSD-2-Clause
"""py_deep.py DEPTH SECONDS: a Python stack DEPTH frames deep (<module>, the recursion and the
spinning leaf all count), spinning in Python at its bottom, for bench/bench_python.sh."""
import sys
import time


def spin(end):
    while time.perf_counter() < end:
        x = 0
        for i in range(20000):
            x += i


def down(n, end):
    if n <= 0:
        spin(end)
    else:
        down(n - 1, end)


depth, seconds = int(sys.argv[1]), float(sys.argv[2])
sys.setrecursionlimit(max(1000, 2 * depth))
down(depth - 3, time.perf_counter() + seconds)  # <module>, down(0) and spin make three
