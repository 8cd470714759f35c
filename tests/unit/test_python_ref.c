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
#include "interp/python_check.h"
#include "interp/python_layout.h"
#include "interp/python_ref.h"
#include "process/proc_mem.h"
#include "symbols/symbolize.h"

/* A child interpreter that printed what it is and waits for its stdin to close. */
struct child {
	pid_t pid;
	int in; /* its stdin: closing it lets the child end */
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
	int to[2], from[2];
	char line[256];
	FILE *f;
	bool ok;

	memset(c, 0, sizeof(*c));
	if (pipe(to) || pipe(from))
		return false;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(python, python, "-c", script, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	f = fdopen(from[0], "r");
	/* Blocks until the interpreter is up: it prints only once it runs the script. */
	ok = f && fgets(line, sizeof(line), f) &&
	     sscanf(line, "ready %d %d %d %" SCNu64, &c->major, &c->minor, &c->micro,
		    &c->code_type) == 4;
	if (f)
		fclose(f);
	return c->pid > 0 && ok;
}

static void stop_python(struct child *c)
{
	close(c->in);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
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

int main(void)
{
	struct python_ref_cache *cache = python_ref_cache__new();
	struct symbolizer *sym = new_symbolizer();

	if (!cache || !sym) {
		CHECK(false, "setup: %s", strerror(errno));
		return check_summary("python_ref");
	}
	test_interpreter(cache, sym, "/usr/bin/python3");
	test_pyenv(cache, sym);
	test_not_python(cache, sym);
	symbolizer__delete(sym);
	python_ref_cache__delete(cache);
	return check_summary("python_ref");
}
