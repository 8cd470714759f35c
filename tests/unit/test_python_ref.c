// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/python_ref.h and interp/python_check.h: CPython found in real interpreters (the host's
 * python3 and each pyenv release present), judged by what the interpreter itself says (its
 * version, id() of the code type: an object's address in CPython) and by /proc/PID/maps; the
 * checks failing on another release's layout and on a fake interpreter's memory, corrupted one
 * piece at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "python_child.h"
#include "interp/python_check.h"
#include "interp/python_layout.h"
#include "interp/python_ref.h"
#include "process/proc_mem.h"
#include "symbols/symbolize.h"

/* A child interpreter that printed what it is and waits for its stdin to close. */
struct child {
	struct python_child proc;
	pid_t pid;
	int major, minor, micro;
	uint64_t code_type; /* id(type(f.__code__)) */
};

/* Python 2.7 and 3.x alike. */
static const char script[] =
	"import sys\n"
	"def f(): pass\n"
	"v = sys.version_info\n"
	"sys.stdout.write('ready %d %d %d %d\\n' % (v[0], v[1], v[2], id(type(f.__code__))))\n"
	"sys.stdout.flush()\n"
	"sys.stdin.read()\n";

static bool start_python(const char *python, struct child *c)
{
	char line[256];

	memset(c, 0, sizeof(*c));
	if (python_child__start(&c->proc, python, "-c", script))
		return false;
	c->pid = c->proc.pid;
	/* Blocks until the interpreter is up: it prints only once it runs the script. */
	return fgets(line, sizeof(line), c->proc.out) &&
	       sscanf(line, "ready %d %d %d %" SCNu64, &c->major, &c->minor, &c->micro,
		      &c->code_type) == 4;
}

static void stop_python(struct child *c)
{
	python_child__stop(&c->proc, true);
}

/* The mapping of pid that holds addr: its path and permissions, from /proc/PID/maps. */
static bool mapping_of(pid_t pid, uint64_t addr, char *path, size_t len, char perms[5],
		       uint64_t *end)
{
	char name[64], line[PATH_MAX + 128];
	bool found = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;
		int off = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %*s %*s %*s %n", &lo, &hi, perms,
			   &off) < 3 ||
		    addr < lo || addr >= hi)
			continue;
		found = true;
		*end = hi;
		snprintf(path, len, "%s", off ? line + off : "");
		path[strcspn(path, "\n")] = '\0';
	}
	if (f)
		fclose(f);
	return found;
}

static struct symbolizer *new_symbolizer(void)
{
	struct symbolizer_opts o = {.proc_root = "/proc",
				    .kallsyms_path = "/dev/null",
				    .max_procs = 64,
				    .max_dsos = 64};

	return symbolizer__new(&o);
}

static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return proc_mem__read((pid_t)(intptr_t)ctx, addr, buf, len);
}

/* Its own layout passes the checks on this interpreter; every other release's fails them. */
static void check_layouts(const struct child *c, const struct python_proc *p)
{
	struct python_mem mem = {.read = read_pid, .ctx = (void *)(intptr_t)c->pid};
	struct python_addrs a = {.runtime = p->runtime, .code_type = p->code_type};
	char why[256];

	for (int m = PYTHON_LAYOUT_MIN_MINOR; m <= PYTHON_LAYOUT_MAX_MINOR; m++) {
		int err = python_check__layout(&mem, python_layout__get(m), &a, why, sizeof(why));

		if (m == c->minor)
			CHECK(err == 0, "3.%d's own layout: %d (%s)", m, err, why);
		else
			CHECK(err == -EINVAL, "3.%d's layout on Python 3.%d: %d (%s)", m, c->minor,
			      err, why);
	}
}

/* What resolve says of a walked release, judged by the interpreter and its maps. */
static void check_walked(const struct child *c, const struct python_proc *p, const char *python)
{
	char path[PATH_MAX], perms[5], want[32];
	uint64_t end = 0;

	CHECK(p->layout && p->layout->minor == c->minor, "%s: the layout of 3.%d", python,
	      c->minor);
	CHECK(p->minor == c->minor, "%s: minor %d, sys says %d", python, p->minor, c->minor);
	if (c->minor >= 11) {
		snprintf(want, sizeof(want), "%d.%d.%d", c->major, c->minor, c->micro);
		CHECK(p->micro == c->micro, "%s: micro %d, sys says %d", python, p->micro,
		      c->micro);
	} else {
		/* Before Py_Version only the file name tells the release. */
		snprintf(want, sizeof(want), "%d.%d", c->major, c->minor);
		CHECK(p->micro == -1, "%s: micro %d unknown", python, p->micro);
	}
	CHECK_STR(p->version, want);
	CHECK_U64(p->code_type, c->code_type);
	/* The evaluation loop is code of the binary named, and ends within its mapping. */
	CHECK(mapping_of(c->pid, p->eval_start, path, sizeof(path), perms, &end) &&
		      perms[2] == 'x' && !strcmp(path, p->binary) && p->eval_end > p->eval_start &&
		      p->eval_end <= end,
	      "%s: eval [0x%" PRIx64 ", 0x%" PRIx64 ") in %s %s, binary %s", python, p->eval_start,
	      p->eval_end, perms, path, p->binary);
	/* _PyRuntime is initialised data of that binary: a writable mapping of it. */
	CHECK(mapping_of(c->pid, p->runtime, path, sizeof(path), perms, &end) && perms[1] == 'w' &&
		      !strcmp(path, p->binary),
	      "%s: runtime 0x%" PRIx64 " in %s %s", python, p->runtime, perms, path);
	check_layouts(c, p);
}

/* One interpreter: resolved as its release says it should be. */
static void test_interpreter(struct python_ref_cache *cache, struct symbolizer *sym,
			     const char *python)
{
	struct python_proc p;
	struct child c;
	char why[256], want[64];
	int err;

	if (access(python, X_OK)) {
		printf("  skipped %s: %s\n", python, strerror(errno));
		return;
	}
	if (!start_python(python, &c)) {
		CHECK(false, "%s did not start", python);
		stop_python(&c);
		return;
	}
	err = python_ref__resolve(cache, sym, c.pid, &p, why, sizeof(why));
	printf("  %s: %d, %s\n", python, err, why);
	if (c.major == 3 && c.minor >= PYTHON_LAYOUT_MIN_MINOR &&
	    c.minor <= PYTHON_LAYOUT_MAX_MINOR) {
		CHECK(err == 0, "%s: %d (%s)", python, err, why);
		if (!err)
			check_walked(&c, &p, python);
	} else {
		snprintf(want, sizeof(want), "Python %d.%d in PID %d: frames not walked", c.major,
			 c.minor, (int)c.pid);
		CHECK(err == -ENOTSUP && !strncmp(why, want, strlen(want)), "%s: %d (%s)", python,
		      err, why);
		CHECK(p.minor == c.minor && !p.layout, "%s: minor %d, no layout", python, p.minor);
		CHECK(p.binary[0] == '/', "%s: binary \"%s\"", python, p.binary);
	}
	/* The second time comes from the cache, and says the same. */
	{
		struct python_proc again;
		char why2[256];
		int err2 = python_ref__resolve(cache, sym, c.pid, &again, why2, sizeof(why2));

		CHECK(err2 == err && again.runtime == p.runtime && !strcmp(why2, why),
		      "%s: again %d (%s)", python, err2, why2);
	}
	stop_python(&c);
}

/* The pyenv releases present: PYENV_ROOT, ~/.pyenv, /root/.pyenv (unit tests run with
 * HOME=/tmp). */
static void test_pyenv(struct python_ref_cache *cache, struct symbolizer *sym)
{
	const char *roots[] = {getenv("PYENV_ROOT"), getenv("HOME"), "/root"};
	const char *suffix[] = {"", "/.pyenv", "/.pyenv"};
	int tested = 0;

	for (size_t r = 0; r < 3 && !tested; r++) {
		char dir[PATH_MAX], python[PATH_MAX + 300];
		struct dirent *e;
		DIR *d;

		if (!roots[r])
			continue;
		snprintf(dir, sizeof(dir), "%s%s/versions", roots[r], suffix[r]);
		d = opendir(dir);
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(python, sizeof(python), "%s/%s/bin/python", dir, e->d_name);
			if (access(python, X_OK))
				continue;
			test_interpreter(cache, sym, python);
			tested++;
		}
		if (d)
			closedir(d);
	}
	if (!tested)
		printf("  skipped pyenv's interpreters: none readable under $PYENV_ROOT, "
		       "$HOME/.pyenv or /root/.pyenv\n");
}

/* A process without Python (this program, forked), and a process that is gone. */
static void test_not_python(struct python_ref_cache *cache, struct symbolizer *sym)
{
	struct python_proc p;
	char why[256];
	int fds[2], err;
	pid_t pid;

	if (pipe(fds))
		return;
	pid = fork();
	if (pid == 0) {
		char b;

		close(fds[1]);
		(void)!read(fds[0], &b, 1);
		_exit(0);
	}
	close(fds[0]);
	err = python_ref__resolve(cache, sym, pid, &p, why, sizeof(why));
	CHECK(err == -ENOENT && strstr(why, "no CPython"), "no Python: %d (%s)", err, why);
	close(fds[1]);
	waitpid(pid, NULL, 0);

	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	err = python_ref__resolve(cache, sym, pid, &p, why, sizeof(why));
	CHECK(err == -ESRCH && strstr(why, "gone"), "gone: %d (%s)", err, why);
}

/*
 * A fake interpreter's memory: the code type with its members, the runtime, one interpreter and
 * one thread state, laid out as a layout says, at FAKE_BASE. Corrupted one piece at a time, each
 * check must fail, and no bad pointer may be followed outside the image.
 */
#define FAKE_BASE 0x10000000ULL
#define FAKE_SIZE 0x6000
#define FAKE_CODE_TYPE 0x0000
#define FAKE_TYPE_NAME 0x0800
#define FAKE_MEMBERS 0x0900
#define FAKE_NAMES 0x0c00
#define FAKE_RUNTIME 0x1000
#define FAKE_INTERP 0x2000
#define FAKE_TSTATE 0x5000 /* 3.13's list of thread states is 7344 bytes into the interpreter */

struct fake_mem {
	uint8_t img[FAKE_SIZE];
	int fail; /* what every read returns instead, when set */
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (m->fail)
		return m->fail;
	if (addr < FAKE_BASE || addr - FAKE_BASE > FAKE_SIZE ||
	    len > FAKE_SIZE - (addr - FAKE_BASE))
		return -EFAULT;
	memcpy(buf, m->img + (addr - FAKE_BASE), len);
	return 0;
}

static void put64(struct fake_mem *m, size_t at, uint64_t v)
{
	if (at + sizeof(v) > FAKE_SIZE)
		abort();
	memcpy(m->img + at, &v, sizeof(v));
}

static void put32(struct fake_mem *m, size_t at, uint32_t v)
{
	if (at + sizeof(v) > FAKE_SIZE)
		abort();
	memcpy(m->img + at, &v, sizeof(v));
}

/* Member i: name, T_INT (1) or T_OBJECT (6), offset. */
static void put_member(struct fake_mem *m, int i, const char *name, int type, uint16_t offset)
{
	size_t at = FAKE_MEMBERS + 40 * (size_t)i, name_at = FAKE_NAMES + 32 * (size_t)i;

	snprintf((char *)m->img + name_at, 32, "%s", name);
	put64(m, at, FAKE_BASE + name_at);
	put32(m, at + 8, (uint32_t)type);
	put64(m, at + 16, offset);
}

/* _Py_DebugOffsets of 3.13.0 (Include/internal/pycore_runtime.h), as the layout says. */
static void put_debug_offsets(struct fake_mem *m, const struct python_layout *l)
{
	const uint16_t pairs[][2] = {
		{40, l->runtime_interp_head}, {72, l->interp_tstate_head}, {168, l->tstate_next},
		{176, l->tstate_interp},      {184, l->tstate_frame},	   {200, l->tstate_thread},
		{232, l->frame_previous},     {240, l->frame_code},	   {248, l->frame_instr},
		{264, l->frame_entry},	      {272, l->code_size},	   {280, l->code_filename},
		{288, l->code_name},	      {296, l->code_qualname},	   {304, l->code_linetable},
		{312, l->code_firstlineno},   {344, l->code_units},
	};

	memcpy(m->img + FAKE_RUNTIME, "xdebugpy", 8);
	put64(m, FAKE_RUNTIME + 8, 0x030d00f0);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		put64(m, FAKE_RUNTIME + pairs[i][0], pairs[i][1]);
}

static void fake_build(struct fake_mem *m, const struct python_layout *l)
{
	int i = 0;

	memset(m, 0, sizeof(*m));
	snprintf((char *)m->img + FAKE_TYPE_NAME, 16, "code");
	put64(m, FAKE_CODE_TYPE + 24, FAKE_BASE + FAKE_TYPE_NAME);
	put64(m, FAKE_CODE_TYPE + 32,
	      l->code_units != HP_PY_NO_OFFSET ? l->code_units : l->code_size);
	put64(m, FAKE_CODE_TYPE + 240, FAKE_BASE + FAKE_MEMBERS);
	put_member(m, i++, "co_argcount", 1, 16);
	put_member(m, i++, "co_filename", 6, l->code_filename);
	put_member(m, i++, "co_name", 6, l->code_name);
	if (l->code_qualname != HP_PY_NO_OFFSET)
		put_member(m, i++, "co_qualname", 6, l->code_qualname);
	put_member(m, i++, "co_firstlineno", 1, l->code_firstlineno);
	put_member(m, i++, "co_linetable", 6, l->code_linetable);
	if (l->minor >= 13)
		put_debug_offsets(m, l);
	put64(m, FAKE_RUNTIME + l->runtime_interp_head, FAKE_BASE + FAKE_INTERP);
	put64(m, FAKE_INTERP + l->interp_tstate_head, FAKE_BASE + FAKE_TSTATE);
	put64(m, FAKE_TSTATE + l->tstate_interp, FAKE_BASE + FAKE_INTERP);
	put64(m, FAKE_TSTATE + l->tstate_thread, 4321);
}

static int fake_check(struct fake_mem *m, const struct python_layout *l, char *why, size_t len)
{
	struct python_mem mem = {.read = fake_read, .ctx = m};
	struct python_addrs a = {.runtime = FAKE_BASE + FAKE_RUNTIME,
				 .code_type = FAKE_BASE + FAKE_CODE_TYPE,
				 .hexversion = l->minor >= 13 ? 0x030d00f0 : 0};

	return python_check__layout(&mem, l, &a, why, len);
}

#define EXPECT_FAKE(l, m, want_err, want_why)                                                      \
	do {                                                                                       \
		char why_[256];                                                                    \
		int err_ = fake_check(m, l, why_, sizeof(why_));                                   \
		CHECK(err_ == (want_err) && strstr(why_, want_why), "3.%d: %d, want %d (%s)",      \
		      (l)->minor, err_, want_err, why_);                                           \
	} while (0)

static void test_fake(void)
{
	static struct fake_mem m;

	for (int minor = PYTHON_LAYOUT_MIN_MINOR; minor <= PYTHON_LAYOUT_MAX_MINOR; minor++) {
		const struct python_layout *l = python_layout__get(minor);

		fake_build(&m, l);
		EXPECT_FAKE(l, &m, 0, "agrees");

		fake_build(&m, l);
		put64(&m, FAKE_CODE_TYPE + 32, 8 + l->code_size);
		EXPECT_FAKE(l, &m, -EINVAL, "tp_basicsize");

		fake_build(&m, l);
		put64(&m, FAKE_MEMBERS + 40 * 2 + 16, 999); /* co_name */
		EXPECT_FAKE(l, &m, -EINVAL, "code.co_name lies at offset 999");

		fake_build(&m, l);
		put32(&m, FAKE_MEMBERS + 40 * 1 + 8, 1); /* co_filename as an int */
		EXPECT_FAKE(l, &m, -EINVAL, "co_filename is of member type 1");

		fake_build(&m, l);
		memset(m.img + FAKE_NAMES + 32 * 2, 'x', 2); /* co_name renamed */
		EXPECT_FAKE(l, &m, -EINVAL, "lists no member co_name");

		fake_build(&m, l);
		snprintf((char *)m.img + FAKE_TYPE_NAME, 16, "dict");
		EXPECT_FAKE(l, &m, -EINVAL, "is named \"dict\"");

		fake_build(&m, l);
		put64(&m, FAKE_CODE_TYPE + 24, 0x7fff00000000ULL); /* tp_name unmapped */
		EXPECT_FAKE(l, &m, -EINVAL, "not readable");

		fake_build(&m, l);
		put64(&m, FAKE_CODE_TYPE + 240, ~0ULL); /* tp_members beyond user space */
		EXPECT_FAKE(l, &m, -EINVAL, "no user address");

		/* A list without its end, of names that match nothing: read as far as the cap. */
		fake_build(&m, l);
		memset(m.img + FAKE_MEMBERS, 0x10, 40 * 8);
		EXPECT_FAKE(l, &m, -EINVAL, "");

		fake_build(&m, l);
		put64(&m, FAKE_RUNTIME + l->runtime_interp_head, 0);
		EXPECT_FAKE(l, &m, -EAGAIN, "no interpreter");

		fake_build(&m, l);
		put64(&m, FAKE_INTERP + l->interp_tstate_head, 0);
		EXPECT_FAKE(l, &m, -EAGAIN, "no thread state");

		fake_build(&m, l);
		put64(&m, FAKE_TSTATE + l->tstate_interp, FAKE_BASE + FAKE_RUNTIME);
		EXPECT_FAKE(l, &m, -EINVAL, "names interpreter");

		fake_build(&m, l);
		put64(&m, FAKE_INTERP + l->interp_tstate_head, FAKE_BASE + FAKE_TSTATE + 4);
		EXPECT_FAKE(l, &m, -EINVAL, "not aligned");

		fake_build(&m, l);
		put64(&m, FAKE_TSTATE + l->tstate_thread, 1ULL << 60);
		EXPECT_FAKE(l, &m, -EINVAL, "which no thread has");

		/* A list of thread states that loops is read as far as the cap, no further. */
		fake_build(&m, l);
		put64(&m, FAKE_TSTATE + l->tstate_next, FAKE_BASE + FAKE_TSTATE);
		EXPECT_FAKE(l, &m, 0, "agrees");

		fake_build(&m, l);
		m.fail = -ESRCH;
		EXPECT_FAKE(l, &m, -ESRCH, "gone");
		m.fail = -EPERM;
		EXPECT_FAKE(l, &m, -EPERM, "not allowed");

		if (minor < 13)
			continue;
		fake_build(&m, l);
		memcpy(m.img + FAKE_RUNTIME, "ydebugpy", 8);
		EXPECT_FAKE(l, &m, -EINVAL, "cookie");

		fake_build(&m, l);
		put64(&m, FAKE_RUNTIME + 16, 1);
		EXPECT_FAKE(l, &m, -ENOTSUP, "free-threaded");

		fake_build(&m, l);
		put64(&m, FAKE_RUNTIME + 8, 0x030e00f0);
		EXPECT_FAKE(l, &m, -EINVAL, "Py_Version says");

		fake_build(&m, l);
		put64(&m, FAKE_RUNTIME + 184, 64);
		EXPECT_FAKE(l, &m, -EINVAL, "thread_state.current_frame is 64");
	}
}

int main(void)
{
	struct python_ref_cache *cache = python_ref_cache__new();
	struct symbolizer *sym = new_symbolizer();

	if (!cache || !sym) {
		CHECK(false, "setup: %s", strerror(errno));
		return check_summary("python_ref");
	}
	test_fake();
	test_interpreter(cache, sym, "/usr/bin/python3");
	test_pyenv(cache, sym);
	test_not_python(cache, sym);
	symbolizer__delete(sym);
	python_ref_cache__delete(cache);
	return check_summary("python_ref");
}
