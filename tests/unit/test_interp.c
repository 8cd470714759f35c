// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/interp.h: the facade the capture uses. A real interpreter (the host's python3) is
 * detected into what BPF needs, and a frame encoded as BPF encodes it (HP_PY_ENCODE of a code
 * object's address, which id() gives in CPython, and a code unit's index) is named with its
 * qualified name, file and line; a process forgotten, never detected or not Python gives an
 * "[unknown]" frame that says why, as does a frame whose address is not a code object.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "python_child.h"
#include "hostprof_abi.h"
#include "interp/interp.h"
#include "interp/python_layout.h"
#include "symbols/symbolize.h"

#define PYTHON "/usr/bin/python3"

/* The interpreter prints the addresses of a method's code object and of a str, the method's
 * first line, and the line of its first instruction after the RESUME (3.11 on) as the
 * interpreter itself maps it, then waits for its stdin to close. */
static const char script[] =
	"import sys, dis\n"
	"class Shapes:\n"
	"    def area(self, n):\n"
	"        return n * n\n"
	"c = Shapes.area.__code__\n"
	"ins = [i for i in dis.get_instructions(c) if i.opname not in ('RESUME', 'CACHE')][0]\n"
	"line = [l for s, e, l in c.co_lines() if s <= ins.offset < e][0]\n"
	"s = 'just a string'\n"
	"sys.stdout.write('ready %d %d %d %d %d\\n' % (id(c), id(s), c.co_firstlineno, "
	"ins.offset // 2, line))\n"
	"sys.stdout.flush()\n"
	"sys.stdin.read()\n";

struct child {
	struct python_child proc;
	uint64_t code, str;
	int first_line, index, line;
};

static bool start_python(struct child *c)
{
	char buf[256];

	memset(c, 0, sizeof(*c));
	if (python_child__start(&c->proc, PYTHON, "-c", script))
		return false;
	return fgets(buf, sizeof(buf), c->proc.out) &&
	       sscanf(buf, "ready %" SCNu64 " %" SCNu64 " %d %d %d", &c->code, &c->str,
		      &c->first_line, &c->index, &c->line) == 5;
}

static void test_python(struct interp *ip)
{
	struct hp_py_proc py;
	struct frame f;
	struct child c;
	char why[512];
	int err;

	if (access(PYTHON, X_OK) != 0) {
		printf("test_interp: %s missing, its checks skipped\n", PYTHON);
		return;
	}
	CHECK(start_python(&c), "python3 started and printed its addresses");
	err = interp__detect(ip, c.proc.pid, &py, why, sizeof(why));
	CHECK(err == 0, "detect: %d %s", err, why);
	CHECK(strstr(why, "Python 3.") != NULL, "why names the release: %s", why);
	CHECK((py.version >> 8) == 3, "version 0x%x", py.version);
	CHECK(py.runtime && py.eval_start && py.eval_end > py.eval_start, "addresses");
	CHECK(interp__version(ip, c.proc.pid) != NULL, "version remembered");

	interp__symbolize(ip, c.proc.pid, HP_PY_ENCODE(c.code, (uint64_t)c.index), &f);
	CHECK(f.kind == FRAME_CPYTHON, "kind %d", f.kind);
	CHECK_STR(f.function, "Shapes.area");
	CHECK(f.nr_lines == 1, "one line");
	CHECK_STR(f.lines[0].file, "<string>");
	CHECK(f.lines[0].line == c.line, "line %" PRId64 " want %d", f.lines[0].line, c.line);
	CHECK(!f.has_mapping, "no mapping");

	/* A str is not a code object: unknown, and said why. */
	interp__symbolize(ip, c.proc.pid, HP_PY_ENCODE(c.str, 0), &f);
	CHECK(f.function == NULL && strstr(f.unknown, "not a code object"), "%s", f.unknown);

	interp__forget(ip, c.proc.pid);
	CHECK(interp__version(ip, c.proc.pid) == NULL, "forgotten");
	interp__symbolize(ip, c.proc.pid, HP_PY_ENCODE(c.code, 0), &f);
	CHECK(f.function == NULL && strstr(f.unknown, "interpreter not known"), "%s", f.unknown);
	python_child__stop(&c.proc, false);
}

/* Not an interpreter: this test itself. */
static void test_not_python(struct interp *ip)
{
	struct hp_py_proc py;
	char why[512];
	int err = interp__detect(ip, getpid(), &py, why, sizeof(why));

	CHECK(err == -ENOENT, "this process: %d %s", err, why);
	CHECK(interp__version(ip, getpid()) == NULL, "not remembered");
}

/* Every field the BPF walk reads of a frame or a thread state lies within the bytes it reads at
 * once. */
static void test_frame_reads(void)
{
	for (int minor = PYTHON_LAYOUT_MIN_MINOR; minor <= PYTHON_LAYOUT_MAX_MINOR; minor++) {
		const struct python_layout *l = python_layout__get(minor);
		unsigned read = minor == 10 ? HP_PY_FRAME_READ : HP_PY_IFRAME_READ;

		CHECK(l != NULL, "3.%d known", minor);
		if (!l)
			continue;
		CHECK(l->frame_previous + 8u <= read, "3.%d previous", minor);
		CHECK(l->frame_code + 8u <= read, "3.%d code", minor);
		CHECK(l->frame_instr + 8u <= read, "3.%d instr", minor);
		CHECK(l->frame_entry == HP_PY_NO_OFFSET || l->frame_entry + 1u <= read,
		      "3.%d entry", minor);
		CHECK((l->frames == HP_PY_FRAMES_OBJECT) == (minor == 10), "3.%d frame kind",
		      minor);
		CHECK(l->tstate_thread + 8u <= HP_PY_TSTATE_READ &&
			      l->tstate_frame + 8u <= HP_PY_TSTATE_READ &&
			      l->tstate_next + 8u <= HP_PY_TSTATE_READ,
		      "3.%d thread state fields within the bytes read", minor);
	}
}

/* What was named and what was not is counted. */
static void test_stats(struct interp *ip)
{
	struct interp_stats st;

	interp__stats(ip, &st);
	CHECK(st.frames >= 3, "frames counted: %" PRIu64, st.frames);
	CHECK(st.frames_unresolved >= 2, "unresolved counted: %" PRIu64, st.frames_unresolved);
}

int main(void)
{
	struct symbolizer_opts opts = {.proc_root = "/proc",
				       .kallsyms_path = "/proc/kallsyms",
				       .max_procs = 64,
				       .max_dsos = 64};
	struct symbolizer *sym = symbolizer__new(&opts);
	struct interp *ip = sym ? interp__new(sym, 0) : NULL;

	CHECK(ip != NULL, "interp__new");
	if (!ip)
		return check_summary("test_interp");
	test_frame_reads();
	test_python(ip);
	test_not_python(ip);
	test_stats(ip);
	interp__delete(ip);
	symbolizer__delete(sym);
	return check_summary("test_interp");
}
