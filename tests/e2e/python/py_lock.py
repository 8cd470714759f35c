# SPDX-License-Identifier: BSD-2-Clause
"""Lock contention between Python threads, measured by the script itself.

Usage: py_lock.py SECONDS OUT.json

Two threads take one threading.Lock in turn: Holder.hold keeps it while it sleeps 20 ms,
Waiter.wait_turn blocks in acquire() meanwhile (a futex wait in the kernel, with the GIL
released). The waiter measures the time it spends in acquire() with the wall clock; on SIGTERM
or after SECONDS the script writes {"python": VERSION, "wait_ns": N, "waits": N, "elapsed_ns":
N} to OUT.json (OUT.json.ready marks that both threads run; elapsed_ns is the time from then).
"""
import json
import signal
import sys
import threading
import time

LOCK = threading.Lock()
STOP = threading.Event()


class Holder:
    def hold(self):
        while not STOP.is_set():
            with LOCK:
                time.sleep(0.02)
            time.sleep(0.001)


class Waiter:
    def __init__(self):
        self.wait_ns = 0
        self.waits = 0

    def wait_turn(self):
        while not STOP.is_set():
            t0 = time.perf_counter_ns()
            LOCK.acquire()
            self.wait_ns += time.perf_counter_ns() - t0
            self.waits += 1
            LOCK.release()
            time.sleep(0.001)


def main():
    secs, out = float(sys.argv[1]), sys.argv[2]
    signal.signal(signal.SIGTERM, lambda *_: STOP.set())
    waiter = Waiter()
    threads = [threading.Thread(target=Holder().hold), threading.Thread(target=waiter.wait_turn)]
    for t in threads:
        t.start()
    t0 = time.perf_counter_ns()
    open(out + ".ready", "w").close()
    STOP.wait(secs)
    STOP.set()
    for t in threads:
        t.join()
    v = sys.version_info
    with open(out, "w") as f:
        json.dump({"python": "%d.%d.%d" % v[:3], "wait_ns": waiter.wait_ns,
                   "waits": waiter.waits, "elapsed_ns": time.perf_counter_ns() - t0}, f)


main()
