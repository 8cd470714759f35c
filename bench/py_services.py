# SPDX-License-Identifier: BSD-2-Clause
"""py_services.py FUNCTIONS SECONDS: a stand-in Python service with FUNCTIONS distinct code
objects (generated, each with its own name, a class method for one in four), all of them called
in turn at a quarter of a CPU, for the symbolizer's code-object cache in bench/bench_python.sh."""
import os
import sys
import time

n, seconds = int(sys.argv[1]), float(sys.argv[2])
src = []
for i in range(n):
    if i % 4:
        src.append("def handler_%d(x):\n    return sum(range(x)) + %d\n" % (i, i))
    else:
        src.append("class Model%d:\n    def handler_%d(self, x):\n        return sum(range(x)) - %d\n"
                   "handler_%d = Model%d().handler_%d\n" % (i, i, i, i, i, i))
scope = {}
# A file name of its own per service, as separate modules would have.
exec(compile("".join(src), "/srv/service_%d/handlers.py" % os.getpid(), "exec"), scope)
handlers = [scope["handler_%d" % i] for i in range(n)]
end = time.perf_counter() + seconds
while time.perf_counter() < end:
    t = time.perf_counter()
    for h in handlers:
        h(50)
    time.sleep(3 * (time.perf_counter() - t))
