# Writes what CPython itself says of its line tables, for tests/unit/test_python_lines.c: run by
# each interpreter found (tests/unit/python.mk), it prints, for the code objects of a few standard
# library modules and of sources made to stress the format (long functions, lines thousands
# apart, lines without a location), one record of two lines:
#   C <minor> <co_firstlineno> <co_linetable as hex>
#   L <line of code unit 0> <line of code unit 1> ...
# the lines from the interpreter's own co_positions() (3.11 on) or co_lines() (3.10), 0 where it
# gives none. Usage: python3 python_lines_fx.py [MAX_CODE_OBJECTS]
import sys

MODULES = ("dis", "json.decoder", "textwrap", "argparse", "asyncio.base_events", "enum")


def walk(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)


def lines_of(code):
    units = len(code.co_code) // 2
    out = [0] * units
    if hasattr(code, "co_positions"):
        for i, pos in enumerate(code.co_positions()):
            line = pos[0]
            out[i] = line if line is not None and line > 0 else 0
    else:
        for start, end, line in code.co_lines():
            for i in range(start // 2, end // 2):
                out[i] = line if line is not None and line > 0 else 0
    return out


def stress_sources():
    # One statement per line, many of them: a table over 64 KiB (the largest single read).
    long_body = "".join("    x = %d\n" % (i % 7) for i in range(40000))
    yield "def long_function():\n" + long_body + "    return x\n"
    # Lines far apart, forward and back (a loop jumps back to its head): the long forms.
    gap = "\n" * 70000
    yield ("def far(a):\n    while a:\n" + gap + "        a -= 1\n" + gap
           + "        if a == 3:\n            break\n    return a\n")
    # Exceptions, comprehensions, lambdas, nested classes: entries without a location.
    yield ("class K:\n    def m(self, v):\n        try:\n            return [i for i in v]\n"
           "        except Exception as e:\n            raise ValueError(str(e)) from e\n"
           "        finally:\n            f = lambda q: q + 1\n")


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    codes = []
    for i, src in enumerate(stress_sources()):
        codes.extend(walk(compile(src, "<stress%d>" % i, "exec")))
    for name in MODULES:
        mod = __import__(name, fromlist=["_"])
        with open(mod.__file__, encoding="utf-8") as f:
            codes.extend(walk(compile(f.read(), mod.__file__, "exec")))
    minor = sys.version_info[1]
    w = sys.stdout.write
    for code in codes[:limit]:
        w("C %d %d %s\n" % (minor, code.co_firstlineno, code.co_linetable.hex()))
        w("L %s\n" % " ".join(str(n) for n in lines_of(code)))


main()
