// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding a Go program's goroutine labels (symbols/go_labels_ref.h): the version in build info
 * (inline strings of Go 1.18 on; the older format, a bad magic, a development build, a length past
 * the section refused), the runtime layouts per release, and the resolution on live processes
 * stopped at their first instruction: the fixture Go binaries (fx_go stripped, fx_go_full with
 * .symtab), this C test itself (not Go), and a copy of fx_go claiming an unknown release.
 */
#include <errno.h>
#include <fcntl.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture_paths.h"
#include "process/proc.h"
#include "symbols/go_labels_ref.h"

static size_t buildinfo(uint8_t *buf, uint8_t flags, const char *version)
{
	size_t n = strlen(version);

	memset(buf, 0, 32);
	memcpy(buf, "\xff Go buildinf:", 14);
	buf[14] = 8;
	buf[15] = flags;
	buf[32] = (uint8_t)n;
	memcpy(buf + 33, version, n);
	return 33 + n;
}

static void test_version(void)
{
	uint8_t b[128];
	char v[64];
	int minor = -1;
	size_t n;

	n = buildinfo(b, 2, "go1.22.3");
	CHECK(!go_labels__version(b, n, &minor, v, sizeof(v)), "go1.22.3 read");
	CHECK(minor == 22, "minor %d, want 22", minor);
	CHECK_STR(v, "go1.22.3");
	n = buildinfo(b, 2, "go1.26rc1");
	CHECK(!go_labels__version(b, n, &minor, v, sizeof(v)) && minor == 26, "go1.26rc1: %d",
	      minor);
	n = buildinfo(b, 0, "go1.17.2");
	CHECK(go_labels__version(b, n, &minor, v, sizeof(v)) == -ENOTSUP,
	      "the pointer format (before 1.18) refused");
	n = buildinfo(b, 2, "devel go1.27-abc");
	CHECK(go_labels__version(b, n, &minor, v, sizeof(v)) == -ENOTSUP, "devel refused");
	n = buildinfo(b, 2, "go1.22.3");
	b[0] = 'x';
	CHECK(go_labels__version(b, n, &minor, v, sizeof(v)) == -EINVAL, "bad magic refused");
	n = buildinfo(b, 2, "go1.22.3");
	CHECK(go_labels__version(b, n - 1, &minor, v, sizeof(v)) == -EINVAL,
	      "a version past the end refused");
	CHECK(go_labels__version(b, 20, &minor, v, sizeof(v)) == -EINVAL, "a short header refused");
	CHECK(go_labels__version(b, n, &minor, v, 4) == -EINVAL,
	      "a version longer than the buffer");
	b[32] = 0x80; /* a varint that never ends within the section */
	memset(b + 33, 0xff, 20);
	CHECK(go_labels__version(b, 53, &minor, v, sizeof(v)) == -EINVAL, "runaway varint");
}

static void test_layouts(void)
{
	for (int m = GO_LABELS_MIN_MINOR; m <= GO_LABELS_MAX_MINOR; m++) {
		const struct go_runtime_layout *l = go_labels__layout(m);

		CHECK(l && l->minor == m, "go1.%d has a layout", m);
		if (!l)
			continue;
		CHECK(l->g_m == 48, "go1.%d: g.m at %u", m, l->g_m);
		CHECK(l->record == (m <= 23 ? HP_CTX_GO_MAP : HP_CTX_GO_SLICE),
		      "go1.%d: labels are a %s", m, m <= 23 ? "map" : "slice");
		CHECK(l->g_labels > 300 && l->m_curg > 100, "go1.%d: plausible offsets", m);
	}
	CHECK(!go_labels__layout(GO_LABELS_MIN_MINOR - 1), "go1.18 unknown");
	CHECK(!go_labels__layout(GO_LABELS_MAX_MINOR + 1), "go1.27 unknown");
}

/* A child stopped at the first instruction of path (PTRACE_TRACEME): its maps are all there. */
static pid_t start_stopped(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		char *argv[] = {(char *)path, NULL};

		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		CHECK(false, "%s did not stop at exec", path);
		return -1;
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The go version the fixture was built with, from its build info. */
static int fixture_minor(const char *path)
{
	static uint8_t buf[8 << 20];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	char v[64];
	int minor = -1;

	if (f)
		fclose(f);
	for (size_t i = 0; i + 64 < n; i++)
		if (!memcmp(buf + i, "\xff Go buildinf:", 14) &&
		    !go_labels__version(buf + i, n - i, &minor, v, sizeof(v)))
			break;
	return minor;
}

/* A copy of fx_go whose build info says go1.99. */
static void copy_as_go199(const char *to)
{
	static uint8_t buf[8 << 20];
	FILE *f = fopen(fx("fx_go"), "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	int fd;

	if (f)
		fclose(f);
	for (size_t i = 0; i + 64 < n; i++) {
		if (!memcmp(buf + i, "\xff Go buildinf:", 14) && !memcmp(buf + i + 33, "go1.", 4)) {
			buf[i + 37] = '9';
			buf[i + 38] = '9';
			break;
		}
	}
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	CHECK(fd >= 0 && write(fd, buf, n) == (ssize_t)n, "copy fx_go to %s", to);
	if (fd >= 0)
		close(fd);
}

/* The offset of member of struct type in the DWARF of path; -1 when not found. */
static long dwarf_member(const char *path, const char *type, const char *member)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;
	long found = -1;

	while (dw && found < 0 && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu, die, m;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				const char *n = dwarf_diename(&die);

				if (dwarf_tag(&die) != DW_TAG_structure_type || !n ||
				    strcmp(n, type) || dwarf_child(&die, &m) != 0)
					continue;
				do {
					Dwarf_Attribute a;
					Dwarf_Word w;

					n = dwarf_diename(&m);
					if (n && !strcmp(n, member) &&
					    dwarf_attr(&m, DW_AT_data_member_location, &a) &&
					    !dwarf_formudata(&a, &w))
						found = (long)w;
				} while (found < 0 && dwarf_siblingof(&m, &m) == 0);
			} while (found < 0 && dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return found;
}

/* The table against the runtime that built the fixtures, as its own DWARF says. */
static void test_layout_matches_dwarf(void)
{
	int minor = fixture_minor(fx("fx_go_full"));
	const struct go_runtime_layout *l = go_labels__layout(minor);
	long g_m = dwarf_member(fx("fx_go_full"), "runtime.g", "m");
	long labels = dwarf_member(fx("fx_go_full"), "runtime.g", "labels");
	long curg = dwarf_member(fx("fx_go_full"), "runtime.m", "curg");

	CHECK(l != NULL, "the fixtures' Go (go1.%d) has a layout", minor);
	CHECK(g_m >= 0 && labels >= 0 && curg >= 0,
	      "fx_go_full's DWARF names g.m %ld, g.labels %ld, "
	      "m.curg %ld",
	      g_m, labels, curg);
	if (l)
		CHECK(l->g_m == g_m && l->g_labels == labels && l->m_curg == curg,
		      "go1.%d: the table says g.m %u g.labels %u m.curg %u", minor, l->g_m,
		      l->g_labels, l->m_curg);
}

static void test_resolve(void)
{
	struct proc_table *procs = proc_table__new("/proc", 64);
	struct go_labels_cache *cache = go_labels_cache__new();
	const char *bins[] = {"fx_go", "fx_go_full", "fx_go_pie"};
	const char *odd = tmp("go199");
	char why[256];
	struct hp_tls_ref ref;
	int rc, minor;
	pid_t pid;

	CHECK(procs && cache, "tables");
	if (!procs || !cache)
		return;
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		const struct go_runtime_layout *l;

		minor = fixture_minor(fx(bins[i]));
		l = go_labels__layout(minor);
		pid = start_stopped(fx(bins[i]));
		if (pid < 0)
			continue;
		for (int round = 0; round < 2; round++) { /* the second from the cache */
			rc = go_labels_ref__resolve(cache, procs, pid, &ref, why, sizeof(why));
			if (!l) {
				CHECK(rc == -ENOTSUP, "%s (go1.%d, no layout): %d %s", bins[i],
				      minor, rc, why);
				continue;
			}
			CHECK(rc == 0, "%s: resolved: %d %s", bins[i], rc, why);
			CHECK(ref.kind == HP_TLS_STATIC && ref.offset == -8,
			      "%s: g at fs-8 (kind %u offset %lld)", bins[i], ref.kind,
			      (long long)ref.offset);
			CHECK(ref.record == l->record && ref.go_g_m == l->g_m &&
				      ref.go_m_curg == l->m_curg && ref.go_g_labels == l->g_labels,
			      "%s: the go1.%d layout", bins[i], minor);
			CHECK(strstr(why, "goroutine labels") != NULL, "%s: why: %s", bins[i], why);
		}
		stop(pid);
	}

	rc = go_labels_ref__resolve(cache, procs, getpid(), &ref, why, sizeof(why));
	CHECK(rc == -ENOENT && strstr(why, "not a Go program"), "a C program: %d %s", rc, why);

	copy_as_go199(odd);
	pid = start_stopped(odd);
	if (pid > 0) {
		rc = go_labels_ref__resolve(cache, procs, pid, &ref, why, sizeof(why));
		CHECK(rc == -ENOTSUP && strstr(why, "go1.99") && strstr(why, "not read"),
		      "an unknown release is named: %d %s", rc, why);
		stop(pid);
	}
	unlink(odd);
	rc = go_labels_ref__resolve(cache, procs, 999999999, &ref, why, sizeof(why));
	CHECK(rc < 0, "a PID that does not exist: %d", rc);
	go_labels_cache__delete(cache);
	proc_table__delete(procs);
	rmdir(tmpdir);
}

int main(void)
{
	CHECK(fixture_paths__init("test_go_labels_ref") == 0, "mkdtemp: %s", strerror(errno));
	test_version();
	test_layouts();
	test_layout_matches_dwarf();
	test_resolve();
	return check_summary("go_labels_ref");
}
