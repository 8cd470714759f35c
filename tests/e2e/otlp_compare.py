#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Compare OTLP profiles as three parties wrote them, for the Collector tests (collector.sh).

The same capture reaches us three ways: hostprof's own request (`-o x.otlp.pb`, decoded by
`protoc --decode` into its text format), the OpenTelemetry Collector's file exporter (OTLP/JSON,
one ProfilesData per line) and the Collector's otlp_http exporter (protobuf again, recorded by
tests/receiver and decoded by protoc). Each is reduced to the same summary, independent of the
order of tables and resources, which any encoder may choose freely:

  per resource (keyed by its attributes), per profile type (`type/unit`): the period, the scope,
  the windows (time_unix_nano, duration_nano, profile_id, ...), the sample values summed by stack
  (function names, leaf first), the sample's attributes and its link, the timestamps; plus every
  location that a sample uses, with its address, lines, attributes and mapping.

Usage:
  otlp_compare.py summary FORMAT FILE...      print the summary (FORMAT: text or json)
  otlp_compare.py same FMT_A A FMT_B B          exit 1, naming the first differences, unless the
                                              summaries are equal; else print what was compared
                                              (A and B may be comma-separated lists of files)
  otlp_compare.py pprof FORMAT FILE TYPE RAW    the OTLP profiles of sample type TYPE against
                                              `go tool pprof -raw` of hostprof's pprof file RAW
                                              (pprof_raw.py): the same total and the same
                                              function-name stacks with the same values
  otlp_compare.py resource FORMAT FILE          one line per resource: key=value;...
  otlp_compare.py selftest

A text FILE holds one request (each has its own dictionary: give several files for several
requests); a json FILE holds one ProfilesData per line. Their profiles are summed together.
"""
import codecs
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pprof_raw  # noqa: E402


class FormatError(Exception):
    pass


def snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def from_json(node):
    """OTLP/JSON into the shape of the text format: snake_case keys, every field a list."""
    if isinstance(node, dict):
        return {snake(k): [from_json(x) for x in (v if isinstance(v, list) else [v])]
                for k, v in node.items()}
    return node


TEXT_TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_.]*)|("(?:[^"\\\n]|\\.)*")|'
                        r'([-+]?[0-9][0-9A-Za-z.+-]*)|([:{}]))')


def text_value(raw):
    if raw.startswith('"'):
        return codecs.escape_decode(raw[1:-1].encode("latin-1", "backslashreplace"))[0]
    if raw in ("true", "false"):
        return raw == "true"
    try:
        return int(raw)
    except ValueError:
        try:
            return float(raw)
        except ValueError:
            return raw  # an enum name


def from_text(text):
    """protoc's text format into nested dicts of lists (strings stay bytes until used)."""
    root = {}
    stack = [root]
    pos = 0
    field = None
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        m = TEXT_TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise FormatError("offset %d: unexpected %r" % (pos, text[pos:pos + 40]))
        pos = m.end()
        name, string, number, punct = m.groups()
        if field is None:
            if punct == "}":
                if len(stack) == 1:
                    raise FormatError("offset %d: '}' without a block" % pos)
                stack.pop()
            elif name:
                field = name
            else:
                raise FormatError("offset %d: a field name wanted, not %r" % (pos, m.group(0)))
        elif punct == ":":
            continue
        elif punct == "{":
            child = {}
            stack[-1].setdefault(field, []).append(child)
            stack.append(child)
            field = None
        elif string is not None or number is not None or name:
            stack[-1].setdefault(field, []).append(text_value(m.group(0).strip()))
            field = None
        else:
            raise FormatError("offset %d: a value wanted for %s, not %r" % (pos, field,
                                                                           m.group(0)))
    if len(stack) != 1 or field is not None:
        raise FormatError("the message ends inside a block or a field")
    return root


def load(fmt, path):
    """The requests of one file as a list of messages (nested dicts of lists)."""
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "text":
        return [from_text(data.decode("utf-8", "replace"))]
    if fmt == "json":
        out = []
        for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if line.strip():
                try:
                    out.append(from_json(json.loads(line)))
                except ValueError as e:
                    raise FormatError("%s line %d: not JSON: %s" % (path, lineno, e))
        return out
    raise FormatError("unknown format %r (text or json)" % fmt)


def one(msg, name, default=None):
    v = msg.get(name) if isinstance(msg, dict) else None
    return v[-1] if v else default


def many(msg, name):
    return msg.get(name, []) if isinstance(msg, dict) else []


def num(v):
    # OTLP/JSON writes 64-bit integers as strings.
    return int(v) if v is not None else 0


def text(v):
    if v is None:
        return ""
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def ident(v):
    """A trace or span id as hex: OTLP/JSON writes hex, the text format escaped bytes. All zero
    is no id, as empty is: hostprof's link_table[0] has zero ids of full length, the Collector
    writes it empty."""
    if v is None:
        return ""
    h = v.hex() if isinstance(v, bytes) else str(v).lower()
    return "" if h.strip("0") == "" else h


def any_value(v, d=None):
    """A canonical form of an AnyValue; string_value_strindex (opentelemetry-proto v1.10, which
    the Collector writes for resource attributes) is resolved through the dictionary d."""
    if v is None:
        return None
    if "string_value_strindex" in v and d is not None:
        return "s:" + d.string(one(v, "string_value_strindex"))
    for k in ("string_value", "bool_value", "int_value", "double_value", "bytes_value"):
        if k in v:
            x = one(v, k)
            if k == "string_value":
                return "s:" + text(x)
            if k == "int_value":
                return "i:%d" % num(x)
            if k == "bytes_value":
                return "b:" + ident(x)
            return "%s:%s" % (k[0], str(x).lower())
    if "array_value" in v:
        return [any_value(x, d) for x in many(one(v, "array_value"), "values")]
    if "kvlist_value" in v:
        return key_values(many(one(v, "kvlist_value"), "values"), d)
    return None


def key_values(kvs, d):
    """KeyValues as a dict; a key may be given by key_strindex instead (opentelemetry-proto
    v1.10)."""
    out = {}
    for kv in kvs:
        key = text(one(kv, "key"))
        if not key and "key_strindex" in kv and d is not None:
            key = d.string(one(kv, "key_strindex"))
        out[key] = any_value(one(kv, "value"), d)
    return out


def canon(v):
    return json.dumps(v, sort_keys=True)


class Dictionary:
    def __init__(self, d):
        self.strings = [text(s) for s in many(d, "string_table")]
        self.functions = many(d, "function_table")
        self.locations = many(d, "location_table")
        self.stacks = many(d, "stack_table")
        self.attributes = many(d, "attribute_table")
        self.links = many(d, "link_table")
        self.mappings = many(d, "mapping_table")

    def at(self, table, i, what):
        if i < 0 or i >= len(table):
            raise FormatError("%s index %d out of range (%d entries)" % (what, i, len(table)))
        return table[i]

    def string(self, i):
        return self.at(self.strings, num(i), "string") if i is not None else ""

    def attrs(self, indices):
        out = {}
        for i in indices:
            kv = self.at(self.attributes, num(i), "attribute")
            key = self.string(one(kv, "key_strindex", 0))
            out[key] = any_value(one(kv, "value"), self)
        return out

    def mapping(self, i):
        m = self.at(self.mappings, num(i), "mapping")
        return "mapping %s [0x%x-0x%x @0x%x] %s" % (
            self.string(one(m, "filename_strindex", 0)), num(one(m, "memory_start", 0)),
            num(one(m, "memory_limit", 0)), num(one(m, "file_offset", 0)),
            canon(self.attrs(many(m, "attribute_indices"))))

    def location(self, i):
        """A location with everything it says: address, mapping, lines, attributes."""
        loc = self.at(self.locations, num(i), "location")
        lines = []
        for line in many(loc, "lines"):
            fn = self.at(self.functions, num(one(line, "function_index", 0)), "function")
            lines.append("%s/%s %s (start %d) line %d:%d" % (
                self.string(one(fn, "name_strindex", 0)),
                self.string(one(fn, "system_name_strindex", 0)),
                self.string(one(fn, "filename_strindex", 0)), num(one(fn, "start_line", 0)),
                num(one(line, "line", 0)), num(one(line, "column", 0))))
        mi = num(one(loc, "mapping_index", 0))
        return "location 0x%x in %s: %s %s" % (
            num(one(loc, "address", 0)), self.mapping(mi) if mi else "-", " < ".join(lines),
            canon(self.attrs(many(loc, "attribute_indices"))))

    def frames(self, stack_index):
        """Function names of a stack, leaf first, inlined frames expanded (innermost first)."""
        names = []
        st = self.at(self.stacks, num(stack_index), "stack")
        for li in many(st, "location_indices"):
            loc = self.at(self.locations, num(li), "location")
            lines = many(loc, "lines")
            if not lines:
                names.append("0x%x" % num(one(loc, "address", 0)))
            for line in lines:
                fn = self.at(self.functions, num(one(line, "function_index", 0)), "function")
                names.append(self.string(one(fn, "name_strindex", 0)) or "??")
        return names


def summarize(msgs):
    """{resource key: {"type/unit": profile summary}}, and the set of the locations and
    mappings that samples use."""
    out = collections.defaultdict(dict)
    tables = set()
    for msg in msgs:
        d = Dictionary(one(msg, "dictionary", {}))
        for rp in many(msg, "resource_profiles"):
            res = one(rp, "resource", {})
            rattrs = key_values(many(res, "attributes"), d)
            rkey = canon(rattrs)
            for sp in many(rp, "scope_profiles"):
                sc = one(sp, "scope", {})
                scope = "%s %s %s, schema %s %s" % (
                    text(one(sc, "name")), text(one(sc, "version")),
                    canon(key_values(many(sc, "attributes"), d)),
                    text(one(rp, "schema_url")), text(one(sp, "schema_url")))
                for p in many(sp, "profiles"):
                    st = one(p, "sample_type", {})
                    ptype = "%s/%s" % (d.string(one(st, "type_strindex", 0)),
                                       d.string(one(st, "unit_strindex", 0)))
                    pt = one(p, "period_type", {})
                    s = out[rkey].setdefault(ptype, {
                        "period": "%d %s/%s" % (num(one(p, "period", 0)),
                                                d.string(one(pt, "type_strindex", 0)),
                                                d.string(one(pt, "unit_strindex", 0))),
                        "windows": [], "stacks": collections.Counter(), "samples": 0,
                        "total": 0, "attributes": canon(d.attrs(many(p, "attribute_indices"))),
                        "scope": scope, "timestamps": []})
                    # Fields hostprof may leave empty, which a re-encoding must keep all the same.
                    s["windows"].append("%d+%d id %s dropped %d payload %s %d" % (
                        num(one(p, "time_unix_nano", 0)), num(one(p, "duration_nano", 0)),
                        ident(one(p, "profile_id")), num(one(p, "dropped_attributes_count", 0)),
                        text(one(p, "original_payload_format")),
                        len(one(p, "original_payload", b"") or b"")))
                    for smp in many(p, "samples"):
                        values = [num(v) for v in many(smp, "values")]
                        v = sum(values) if values else len(many(smp, "timestamps_unix_nano"))
                        link = d.at(d.links, num(one(smp, "link_index", 0)), "link")
                        key = "%s | %s | %s %s" % (
                            ";".join(d.frames(one(smp, "stack_index", 0))),
                            canon(d.attrs(many(smp, "attribute_indices"))),
                            ident(one(link, "trace_id")), ident(one(link, "span_id")))
                        s["stacks"][key] += v
                        s["samples"] += 1
                        s["total"] += v
                        s["timestamps"].extend(num(t) for t in
                                               many(smp, "timestamps_unix_nano"))
                        st_ = d.at(d.stacks, num(one(smp, "stack_index", 0)), "stack")
                        for li in many(st_, "location_indices"):
                            tables.add(d.location(li))
    for res in out.values():
        for s in res.values():
            s["windows"].sort()
            s["timestamps"].sort()
            s["stacks"] = dict(s["stacks"])
    return dict(out), tables


def differences(a, b, name_a, name_b, limit=4):
    (ra, ma), (rb, mb) = a, b
    diffs = []
    for rkey in sorted(set(ra) | set(rb)):
        if rkey not in rb:
            diffs.append("resource %s only in %s" % (rkey, name_a))
            continue
        if rkey not in ra:
            diffs.append("resource %s only in %s" % (rkey, name_b))
            continue
        for ptype in sorted(set(ra[rkey]) | set(rb[rkey])):
            pa, pb = ra[rkey].get(ptype), rb[rkey].get(ptype)
            if pa is None or pb is None:
                diffs.append("profile type %s of %s only in %s" % (
                    ptype, rkey, name_a if pb is None else name_b))
                continue
            for field in ("period", "windows", "attributes", "scope", "total", "samples",
                          "timestamps"):
                if pa[field] != pb[field]:
                    diffs.append("%s %s of %s: %s has %s, %s has %s" % (
                        ptype, field, rkey, name_a, pa[field], name_b, pb[field]))
            for key in sorted(set(pa["stacks"]) | set(pb["stacks"])):
                va, vb = pa["stacks"].get(key, 0), pb["stacks"].get(key, 0)
                if va != vb:
                    diffs.append("%s stack [%s] of %s: %s has %d, %s has %d" % (
                        ptype, key[:200], rkey[:100], name_a, va, name_b, vb))
    for m in sorted(ma ^ mb):
        diffs.append("%s only in %s" % (m[:300], name_a if m in ma else name_b))
    return diffs[:limit], len(diffs)


def describe(summary):
    res, tables = summary
    types = collections.Counter()
    stacks = samples = 0
    for r in res.values():
        for ptype, s in r.items():
            types[ptype] += s["total"]
            stacks += len(s["stacks"])
            samples += s["samples"]
    return "%d resources, %s, %d samples, %d distinct stacks, %d locations" % (
        len(res), ", ".join("%s %d" % kv for kv in sorted(types.items())), samples, stacks,
        len(tables))


def against_pprof(summary, ptype_name, raw_path):
    """The OTLP profiles of type ptype_name (all resources) against a pprof -raw text."""
    res, _ = summary
    with open(raw_path, encoding="utf-8", errors="replace") as f:
        prof = pprof_raw.parse(f.read())
    otlp = collections.Counter()
    seen = False
    for r in res.values():
        for ptype, s in r.items():
            if ptype.split("/")[0] != ptype_name:
                continue
            seen = True
            for key, v in s["stacks"].items():
                otlp[key.split(" | ")[0]] += v
    if not seen:
        return ["no OTLP profile of sample type %r" % ptype_name], ""
    i = prof.type_index(ptype_name)
    pp = collections.Counter()
    for smp in prof.samples:
        pp[";".join(prof.stack(smp))] += smp.values[i]
    diffs = []
    if sum(otlp.values()) != sum(pp.values()):
        diffs.append("%s total: OTLP %d, pprof %d" % (ptype_name, sum(otlp.values()),
                                                      sum(pp.values())))
    fo = {f for k, v in otlp.items() if v for f in k.split(";")}
    fp = {f for k, v in pp.items() if v for f in k.split(";")}
    if fo != fp:
        diffs.append("functions only in OTLP: %s; only in pprof: %s" % (
            " ".join(sorted(fo - fp)[:8]) or "-", " ".join(sorted(fp - fo)[:8]) or "-"))
    for key in sorted(set(otlp) | set(pp)):
        if otlp.get(key, 0) != pp.get(key, 0):
            diffs.append("stack [%s]: OTLP %d, pprof %d" % (key[:200], otlp.get(key, 0),
                                                           pp.get(key, 0)))
    return diffs, "%s total %d in %d stacks of %d functions" % (
        ptype_name, sum(pp.values()), len(pp), len(fp))


SELFTEST_TEXT = r'''
resource_profiles {
  resource {
    attributes { key: "service.name" value { string_value: "cpu_ratio" } }
    attributes { key: "process.pid" value { int_value: 42 } }
  }
  scope_profiles {
    profiles {
      sample_type { type_strindex: 1 unit_strindex: 2 }
      samples { stack_index: 1 attribute_indices: 1 values: 40 }
      samples { stack_index: 2 values: 20 }
      time_unix_nano: 1000
      duration_nano: 5
      period_type { type_strindex: 1 unit_strindex: 2 }
      period: 10
    }
  }
}
dictionary {
  mapping_table { }
  mapping_table { filename_strindex: 5 }
  location_table { }
  location_table { mapping_index: 1 address: 16 lines { function_index: 1 } }
  location_table { mapping_index: 1 address: 32 lines { function_index: 2 } }
  location_table { address: 48 }
  function_table { }
  function_table { name_strindex: 3 }
  function_table { name_strindex: 4 }
  link_table { }
  string_table: ""
  string_table: "cpu"
  string_table: "nanoseconds"
  string_table: "burn\303\251"
  string_table: "main"
  string_table: "/bin/x"
  string_table: "thread.name"
  attribute_table { }
  attribute_table { key_strindex: 6 value { string_value: "t1" } }
  stack_table { }
  stack_table { location_indices: 1 location_indices: 2 }
  stack_table { location_indices: 3 location_indices: 2 }
}
'''


def selftest():
    a = summarize([from_text(SELFTEST_TEXT)])
    js = {"resourceProfiles": [{"resource": {"attributes": [
        {"key": "process.pid", "value": {"intValue": "42"}},
        {"keyStrindex": 7, "value": {"stringValueStrindex": 8}}]},
        "scopeProfiles": [{"profiles": [{
            "sampleType": {"typeStrindex": 2, "unitStrindex": 1},
            "samples": [{"stackIndex": 2, "attributeIndices": [1], "values": ["40"]},
                        {"stackIndex": 1, "values": ["20"]}],
            "timeUnixNano": "1000", "durationNano": "5",
            "periodType": {"typeStrindex": 2, "unitStrindex": 1}, "period": "10"}]}]}],
        "dictionary": {
            "mappingTable": [{}, {"filenameStrindex": 4}],
            "locationTable": [
                {}, {"address": "48"},
                {"mappingIndex": 1, "address": "32", "lines": [{"functionIndex": 1}]},
                {"mappingIndex": 1, "address": "16", "lines": [{"functionIndex": 2}]}],
            "functionTable": [{}, {"nameStrindex": 3}, {"nameStrindex": 6}],
            "linkTable": [{}],
            "stringTable": ["", "nanoseconds", "cpu", "main", "/bin/x", "thread.name",
                            "burn\u00e9", "service.name", "cpu_ratio"],
            "attributeTable": [{}, {"keyStrindex": 5, "value": {"stringValue": "t1"}}],
            "stackTable": [{}, {"locationIndices": [1, 2]}, {"locationIndices": [3, 2]}]}}
    b = summarize([from_json(json.loads(json.dumps(js)))])
    diffs, n = differences(a, b, "text", "json")
    assert n == 0, diffs
    (res, _) = a
    s = list(res.values())[0]["cpu/nanoseconds"]
    assert s["total"] == 60 and s["samples"] == 2, s
    assert s["stacks"]['burn\u00e9;main | {"thread.name": "s:t1"} |  '] == 40, s["stacks"]
    assert s["stacks"]["0x30;main | {} |  "] == 20, s["stacks"]
    js["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]["samples"][1]["values"] = ["21"]
    diffs, n = differences(a, summarize([from_json(js)]), "text", "json")
    assert n == 2 and "stack [0x30;main" in " ".join(diffs), diffs
    # A location moved to another address: the same stacks, a different location table.
    js["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]["samples"][1]["values"] = ["20"]
    js["dictionary"]["locationTable"][2]["address"] = "33"
    diffs, n = differences(a, summarize([from_json(js)]), "text", "json")
    assert n == 2 and "location 0x21 in mapping /bin/x" in " ".join(diffs), diffs
    for bad in ["a {\n", "}\n", "a: \"x\n", "%%%\n"]:
        try:
            from_text(bad)
        except FormatError:
            continue
        raise AssertionError("accepted %r" % bad)
    print("selftest ok")


def main(argv):
    try:
        if argv[:1] == ["selftest"]:
            selftest()
            return 0
        if len(argv) >= 3 and argv[0] == "summary":
            msgs = [m for p in argv[2:] for m in load(argv[1], p)]
            res, tables = summarize(msgs)
            print(json.dumps({"resources": res, "locations": sorted(tables)}, indent=1,
                             sort_keys=True))
            return 0
        if len(argv) == 5 and argv[0] == "same":
            a = summarize([m for p in argv[2].split(",") for m in load(argv[1], p)])
            b = summarize([m for p in argv[4].split(",") for m in load(argv[3], p)])
            diffs, n = differences(a, b, os.path.basename(argv[2]), os.path.basename(argv[4]))
            if n:
                print("%d differences: %s" % (n, "; ".join(diffs)))
                return 1
            print("equal: %s" % describe(a))
            return 0
        if len(argv) == 5 and argv[0] == "pprof":
            diffs, what = against_pprof(summarize(load(argv[1], argv[2])), argv[3], argv[4])
            if diffs:
                print("%d differences from pprof: %s" % (len(diffs), "; ".join(diffs[:4])))
                return 1
            print("equal to pprof: %s" % what)
            return 0
        if len(argv) == 3 and argv[0] == "resource":
            res, _ = summarize(load(argv[1], argv[2]))
            for rkey in sorted(res):
                attrs = json.loads(rkey)
                print(";".join("%s=%s" % (k, v if not isinstance(v, str) else v[2:])
                               for k, v in sorted(attrs.items())))
            return 0
    except (OSError, FormatError, pprof_raw.RawError) as e:
        print("otlp_compare.py: %s" % e, file=sys.stderr)
        return 2
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
