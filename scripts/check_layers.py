#!/usr/bin/env python3
"""Check that src/ keeps its layers: includes name their folder and only go down the layer order,
and no modules call each other in a cycle.

    scripts/check_layers.py [--objects DIR] [SRC]

SRC (default src) holds one folder per layer. LAYERS below is the order, lowest first; it is the
one place it is written down (docs/ARCHITECTURE.md explains it). A file may include headers of its
own layer and of the layers below it, never above. Headers that are not ours keep their names:
system headers (<...>), the ABI header shared with BPF (hostprof_abi.h), the generated skeletons
(bpf/*.skel.h) and protobuf code (*.pb-c.h).

With --objects DIR (the build's object directory, DIR/<layer>/<module>.o), it also reads which
module calls which (nm: what each object defines and what it needs) and fails on a cycle: two
modules that need each other cannot be understood, tested or replaced one at a time. A cycle within
one layer is as wrong as one across layers.

Exits 0 when clean, 1 with one line per problem, 2 on bad usage.
"""
import argparse
import os
import re
import subprocess
import sys

# Lowest first. A layer may use only itself and what comes before it.
LAYERS = [
    "base",  # containers, strings, time, logging, files, threads: nothing hostprof-specific
    "model",  # the values every stage speaks: the profile model and the options of a run
    "collect",  # the BPF session and the drain of its maps into sample batches
    "process",  # the process table, the watcher of new processes, who a process is
    "unwind",  # .eh_frame into unwind tables, loaded into the BPF maps
    "symbols",  # ELF, DWARF, debug files, kallsyms, perf maps: address -> frame
    "interp",  # interpreters whose frames BPF walks (CPython): detected, read, named
    "capture",  # batches -> symbolized profiles: the builder and the capture pipeline
    "formats",  # encoders and decoders over the profile model
    "export",  # transports, the export queue, delivery to files and receivers
    "agent",  # the agent's configuration, HTTP endpoints and metrics
    "cmd",  # main and one file per command
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FOREIGN = re.compile(r"^(hostprof_abi\.h|bpf/[\w-]+\.skel\.h|.+\.pb-c\.h)$")


def source_files(src):
    for layer in sorted(os.listdir(src)):
        d = os.path.join(src, layer)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                yield layer, os.path.join(d, name)


def check_includes(src):
    problems = []
    for layer in sorted(os.listdir(src)):
        path = os.path.join(src, layer)
        if os.path.isdir(path) and layer not in LAYERS:
            problems.append(f"{path}: a folder that is not a layer (add it to LAYERS in {__file__})")
        elif os.path.isfile(path) and path.endswith((".c", ".h")):
            problems.append(f"{path}: a source file outside the layer folders")
    for layer, path in source_files(src):
        if layer not in LAYERS:
            continue
        rank = LAYERS.index(layer)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if FOREIGN.match(inc):
                continue
            target, _, rest = inc.partition("/")
            if not rest or target not in LAYERS:
                problems.append(f'{path}:{line}: #include "{inc}" does not name a layer folder')
            elif not os.path.exists(os.path.join(src, inc)):
                problems.append(f'{path}:{line}: #include "{inc}": no such file in {src}')
            elif LAYERS.index(target) > rank:
                problems.append(
                    f'{path}:{line}: #include "{inc}" goes up the layers '
                    f"({layer} may use only {', '.join(LAYERS[: rank + 1])})"
                )
    return problems


def symbols_of(obj):
    """What an object defines and what it needs, from nm."""
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True)
    defined = {l.split()[-1] for l in out.stdout.splitlines() if l.strip()}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True)
    needed = {l.split()[-1] for l in out.stdout.splitlines() if l.strip()}
    return defined, needed


def check_cycles(objdir):
    objs = []
    for root, _, names in os.walk(objdir):
        objs += [os.path.join(root, n) for n in names if n.endswith(".o")]
    if not objs:
        return [f"{objdir}: no objects to read (build first)"]
    module = {o: os.path.relpath(o, objdir)[: -len(".o")] for o in objs}
    owner, needs = {}, {}
    for o in objs:
        defined, needed = symbols_of(o)
        for s in defined:
            owner[s] = module[o]
        needs[module[o]] = needed
    graph = {m: sorted({owner[s] for s in n if s in owner} - {m}) for m, n in needs.items()}
    return [
        "modules that call each other in a cycle: " + " -> ".join(c + [c[0]])
        for c in strongly_connected(graph)
        if len(c) > 1
    ]


def strongly_connected(graph):
    """Tarjan's algorithm, iterative; each component as a list of modules."""
    index, low, on_stack, stack, comps, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on_stack.add(v)
            succ = graph.get(v, [])
            if i < len(succ):
                work.append((v, i + 1))
                w = succ[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return comps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", nargs="?", default="src")
    ap.add_argument("--objects", metavar="DIR", help="object directory: also check for call cycles")
    args = ap.parse_args()
    if not os.path.isdir(args.src):
        print(f"check_layers: {args.src}: not a directory", file=sys.stderr)
        return 2
    problems = check_includes(args.src)
    if args.objects:
        problems += check_cycles(args.objects)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s); the layer order is LAYERS in {__file__}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
