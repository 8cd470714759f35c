#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Summarize OTLP profiles requests, as `protoc --decode` prints them, for the agent tests.

Reads the protobuf text format of ExportProfilesServiceRequest messages (one file per request,
given as arguments) and prints one line per resource:

    FILE<TAB>key=value;key=value;...<TAB>samples=N<TAB>duration_ns=D

with the resource's string and int attributes, the sum of its profiles' sample values, and the
duration_nano of its first profile. The parser is independent of hostprof: it reads protoc's
generic text output (nested `name {` blocks and `name: value` fields).
"""

import re
import sys


def parse(text):
    """The text format as nested lists of (name, value) pairs; blocks become lists."""
    root = []
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = []
            stack[-1].append((line[:-1].strip(), child))
            stack.append(child)
        elif line == "}":
            stack.pop()
        else:
            m = re.match(r'([A-Za-z_0-9]+): (.*)$', line)
            if m:
                value = m.group(2)
                if value.startswith('"'):
                    value = bytes(value[1:-1], "utf-8").decode("unicode_escape")
                stack[-1].append((m.group(1), value))
    return root


def fields(node, name):
    return [v for (k, v) in node if k == name]


def first(node, name, default=None):
    found = fields(node, name)
    return found[0] if found else default


def main():
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            req = parse(f.read())
        for rp in fields(req, "resource_profiles"):
            attrs = []
            for kv in fields(first(rp, "resource", []), "attributes"):
                value = first(kv, "value", [])
                v = first(value, "string_value", first(value, "int_value", ""))
                attrs.append("%s=%s" % (first(kv, "key", ""), v))
            samples = 0
            duration = 0
            for sp in fields(rp, "scope_profiles"):
                for prof in fields(sp, "profiles"):
                    duration = duration or int(first(prof, "duration_nano", "0"))
                    for s in fields(prof, "samples"):
                        samples += sum(int(v) for v in fields(s, "values"))
            print("%s\t%s\tsamples=%d\tduration_ns=%d" % (path, ";".join(attrs), samples, duration))


if __name__ == "__main__":
    main()
