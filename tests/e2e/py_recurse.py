# SPDX-License-Identifier: BSD-2-Clause
# Python recursing 40 deep, forever: its interpreter frames run through _PyEval_EvalFrameDefault.
# Run as `python3 -c "$(cat py_recurse.py)"` by tests/e2e/unwind.sh and tests/kernels/guest.sh.
def down(n):
    if n == 0:
        s = 0
        for i in range(20000):
            s += i
        return s
    return down(n - 1) + 1


while True:
    down(40)
