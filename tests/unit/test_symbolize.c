// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbolizer over a fake /proc (fake_proc.h), so that runtime address → mapping → ELF address
 * → symbol is checked end to end for PIE, non-PIE, a shared library and a stripped one.
 */
#include <fcntl.h>

#include "check.h"
#include "fake_proc.h"
#include "symbols/dso.h"
#include "symbols/symbolize.h"

static void check_user(struct symbolizer *s, uint64_t addr, bool ret, const char *want_fn,
		       uint64_t want_file_addr)
{
	struct frame f;

	symbolizer__user(s, FAKE_PID, addr, ret, &f);
	CHECK(f.kind == FRAME_NATIVE, "kind %d", f.kind);
	CHECK(f.function && !strcmp(f.function, want_fn), "0x%" PRIx64 ": got %s, want %s", addr,
	      f.function ? f.function : f.unknown, want_fn);
	CHECK_U64(f.address, want_file_addr);
	CHECK(f.has_mapping, "0x%" PRIx64 " has no mapping", addr);
	/* Mapping and address share the file's address space: the one holds the other. */
	CHECK(f.mapping.start <= f.address && f.address < f.mapping.limit,
	      "0x%" PRIx64 " outside its mapping [0x%" PRIx64 ", 0x%" PRIx64 ")", f.address,
	      f.mapping.start, f.mapping.limit);
}

static void test_user_frames(struct symbolizer *s)
{
	uint64_t beta = func_addr("fx_pie", "fx_beta");
	uint64_t nopie_beta = func_addr("fx_nopie", "fx_beta");
	uint64_t lib_alpha = func_addr("libfx.so", "fx_lib_alpha");
	uint64_t stripped_alpha = func_addr("libfx-stripped.so", "fx_lib_alpha");
	struct frame f;

	CHECK(beta && nopie_beta && lib_alpha && stripped_alpha, "fixture symbols not found");
	/* PIE: runtime = base + ELF address. */
	check_user(s, PIE_BASE + beta, false, "fx_beta", beta);
	check_user(s, PIE_BASE + beta + 5, false, "fx_beta", beta + 5);
	/* A return address just past a call is looked up one byte earlier. */
	check_user(s, PIE_BASE + beta + 1, true, "fx_beta", beta);
	/* Non-PIE: runtime address == ELF address. */
	check_user(s, nopie_beta + 3, false, "fx_beta", nopie_beta + 3);
	/* A shared library, and its stripped copy through .dynsym. */
	check_user(s, LIB_BASE + lib_alpha + 2, false, "fx_lib_alpha", lib_alpha + 2);
	check_user(s, STRIPPED_BASE + stripped_alpha, false, "fx_lib_alpha", stripped_alpha);

	symbolizer__user(s, FAKE_PID, PIE_BASE + beta, false, &f);
	CHECK(f.mapping.build_id_hex && strlen(f.mapping.build_id_hex) == 40, "build-id '%s'",
	      f.mapping.build_id_hex ? f.mapping.build_id_hex : "(null)");
	CHECK(f.mapping.path && strstr(f.mapping.path, "fx_pie"), "path %s", f.mapping.path);

	/* Anonymous memory (JIT code, say): kept as an unknown frame with its offset. */
	symbolizer__user(s, FAKE_PID, ANON_START + 0x123, false, &f);
	CHECK(!f.function, "anon resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] [anon]+0x123");

	/* A binary that cannot be read: its file offset, never a dropped frame. */
	symbolizer__user(s, FAKE_PID, ANON_START + 0x20010, false, &f);
	CHECK(!f.function, "unreadable resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] /nonexistent/libgone.so+0x10");

	/* An address in no mapping. */
	symbolizer__user(s, FAKE_PID, 0x10, false, &f);
	CHECK_STR(f.unknown, "[unknown] [unmapped]+0x10");

	/* A process that never existed. */
	symbolizer__user(s, 999999, PIE_BASE + beta, false, &f);
	CHECK(!f.function, "ghost pid resolved to %s", f.function);
}

/* A process that exits after its maps were read still resolves from the snapshot. */
static void test_exited(struct symbolizer *s)
{
	uint64_t beta = func_addr("fx_pie", "fx_beta");
	char cmd[2 * PATH_MAX];
	struct frame f;

	CHECK(symbolizer__track(s, FAKE_PID) == 0, "track failed");
	snprintf(cmd, sizeof(cmd), "rm -rf %s/%d", root, FAKE_PID);
	CHECK(system(cmd) == 0, "%s", cmd);
	/* Missing an address forces a refresh attempt on a process that is gone. */
	symbolizer__user(s, FAKE_PID, 0x20, false, &f);
	symbolizer__user(s, FAKE_PID, PIE_BASE + beta, false, &f);
	CHECK(f.function && !strcmp(f.function, "fx_beta"), "after exit: %s",
	      f.function ? f.function : f.unknown);
}

/*
 * What the process watcher hands over: a snapshot and an fd on a binary. The binary is held, not
 * read, until a sample needs it; then it is read through the fd, which works after the process
 * (and its /proc entry) is gone. Without the fd, the same address stays unresolved.
 */
static void watched_exit(bool with_fd, struct frame *f, struct symbolizer_stats *before,
			 struct symbolizer_stats *after)
{
	struct symbolizer_opts o = {.proc_root = root,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 16,
				    .max_dsos = 16};
	struct symbolizer *s = symbolizer__new(&o);
	struct proc_table *reader = proc_table__new(root, 1);
	struct proc_watch_item it = {.pid = FAKE_PID};
	char path[3 * PATH_MAX], cmd[2 * PATH_MAX];
	struct stat st;

	memset(f, 0, sizeof(*f));
	fake_proc__populate();
	snprintf(path, sizeof(path), "%s/fx_pie", fixtures);
	if (!s || !reader || proc_table__read(reader, FAKE_PID, &it.proc) || stat(path, &st)) {
		CHECK(0, "setup: symbolizer, fake process and fx_pie");
		goto out;
	}
	if (with_fd) {
		it.binaries[0] = (struct proc_watch_binary){.fd = open(path, O_RDONLY | O_CLOEXEC),
							    .dev = st.st_dev,
							    .inode = st.st_ino,
							    .path = strdup(path)};
		it.nr_binaries = 1;
	}
	symbolizer__adopt(s, &it);
	proc_watch_item__release(&it);
	symbolizer__stats(s, before);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/%d", root, FAKE_PID);
	CHECK(system(cmd) == 0, "%s", cmd);
	symbolizer__user(s, FAKE_PID, PIE_BASE + func_addr("fx_pie", "fx_beta"), false, f);
	symbolizer__stats(s, after);
	if (f->function) /* owned by the symbolizer: keep a copy past its end */
		f->function = strcmp(f->function, "fx_beta") ? "(other)" : "fx_beta";
out:
	proc_table__delete(reader);
	symbolizer__delete(s);
}

static void test_watched_binaries(void)
{
	struct symbolizer_stats before, after;
	struct frame f;

	watched_exit(true, &f, &before, &after);
	CHECK(before.binaries_held == 1 && before.dsos_cached == 0,
	      "adopted: the binary is held (%zu), not read (%zu)", before.binaries_held,
	      before.dsos_cached);
	CHECK(f.function && !strcmp(f.function, "fx_beta"), "after exit, through the held fd: %s",
	      f.function ? f.function : f.unknown);
	CHECK(after.binaries_held == 0 && after.dsos_cached == 1,
	      "read once needed, and the fd let go (%zu held, %zu read)", after.binaries_held,
	      after.dsos_cached);

	watched_exit(false, &f, &before, &after);
	CHECK(!f.function, "without the fd, the gone process's binary is not found: %s",
	      f.function ? f.function : "");
}

/*
 * More binaries than held slots: each either stays held or, when its slot is wanted by another,
 * is read there and then (its process may be gone by its first sample). None is lost, and no more
 * than the slots' worth of fds stay open.
 */
static void test_held_collisions(void)
{
	enum { N = 300 };
	struct symbolizer_opts o = {.proc_root = root,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 16,
				    .max_dsos = 2 * N};
	struct symbolizer *s = symbolizer__new(&o);
	struct symbolizer_stats st;
	char dir[] = "/tmp/hostprof-test-held-XXXXXX", path[64], cmd[64];
	size_t adopted = 0;

	if (!s || !mkdtemp(dir)) {
		CHECK(0, "setup: symbolizer and a scratch directory");
		symbolizer__delete(s);
		return;
	}
	for (int i = 0; i < N; i++) {
		struct proc_watch_item it = {.pid = 7000 + i};
		struct stat fst;
		int fd;

		snprintf(path, sizeof(path), "%s/bin%d", dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || fstat(fd, &fst)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		it.binaries[0] = (struct proc_watch_binary){
			.fd = fd, .dev = fst.st_dev, .inode = fst.st_ino, .path = strdup(path)};
		it.nr_binaries = 1;
		symbolizer__adopt(s, &it); /* an empty snapshot: the binaries are what matters */
		proc_watch_item__release(&it);
		adopted++;
	}
	symbolizer__stats(s, &st);
	CHECK_U64(adopted, N);
	CHECK(st.binaries_held <= 256 && st.binaries_held > 0, "%zu held", st.binaries_held);
	CHECK(st.binaries_held + st.dsos_cached == N,
	      "every binary held or read: %zu held + %zu read of %d", st.binaries_held,
	      st.dsos_cached, N);
	symbolizer__delete(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
}

static void test_kernel(void)
{
	struct symbolizer_opts o = {.proc_root = root,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 16,
				    .max_dsos = 16};
	struct symbolizer *s = symbolizer__new(&o);
	struct frame f;

	CHECK(s != NULL, "symbolizer__new: %s", strerror(errno));
	if (!s)
		return;
	symbolizer__kernel(s, 0xffffffff81001010ULL, false, &f);
	CHECK(f.kind == FRAME_KERNEL && f.function && !strcmp(f.function, "do_one_initcall"),
	      "kernel: %s", f.function ? f.function : f.unknown);
	symbolizer__kernel(s, 0x1000, false, &f);
	CHECK(!f.function, "below the first symbol resolved to %s", f.function);
	CHECK_STR(f.unknown, "[unknown] [kernel]+0x1000");
	symbolizer__delete(s);

	/* Unreadable kallsyms: the symbolizer still works, kernel frames are unknown. */
	o.kallsyms_path = "/nonexistent/kallsyms";
	s = symbolizer__new(&o);
	CHECK(s != NULL, "symbolizer without kallsyms: %s", strerror(errno));
	if (s) {
		symbolizer__kernel(s, 0xffffffff81001010ULL, false, &f);
		CHECK(!f.function && strstr(f.unknown, "[kernel]"), "got %s", f.unknown);
		symbolizer__delete(s);
	}
}

/* Binaries by identity, symbols by name, load bias: the fake process's libraries as mapped. */
static void test_exports(struct symbolizer *s)
{
	static const char *const names[] = {"fx_lib_alpha", "no_such_symbol"};
	struct process_binary bins[16];
	struct dso_symbol out[2];
	int n = symbolizer__binaries(s, FAKE_PID, bins, 16), lib = -1, stripped = -1, pie = -1;
	uint64_t bias = 0;

	for (int i = 0; i < n && i < 16; i++) {
		const char *base = strrchr(bins[i].path, '/') + 1;

		lib = strcmp(base, "libfx.so") ? lib : i;
		stripped = strcmp(base, "libfx-stripped.so") ? stripped : i;
		pie = strcmp(base, "fx_pie") ? pie : i;
		CHECK(!bins[i].is_exe, "%s: the fake process has no exe link", bins[i].path);
	}
	/* fx_pie, fx_nopie, both libraries, fx_inline, libgone: each once. */
	CHECK(n == 6 && lib >= 0 && stripped >= 0 && pie >= 0, "%d binaries", n);
	CHECK(symbolizer__binaries(s, FAKE_PID, bins, 2) == n, "the count without room for all");
	n = symbolizer__binaries(s, FAKE_PID, bins, 16);
	if (lib < 0 || stripped < 0 || pie < 0)
		return;
	/* .symtab, and .dynsym alone in the stripped copy. */
	for (int k = 0; k < 2; k++) {
		const struct process_binary *b = &bins[k ? stripped : lib];
		int found = symbolizer__find_exports(s, FAKE_PID, b->dev, b->inode, names, 2, out);

		CHECK(found == 1 && out[0].name == names[0] && !out[1].name, "%s: %d found",
		      b->path, found);
		CHECK_U64(out[0].addr, func_addr("libfx.so", "fx_lib_alpha"));
		CHECK(symbolizer__load_bias(s, FAKE_PID, b->dev, b->inode, &bias) == 0,
		      "%s: no bias", b->path);
		CHECK_U64(bias, k ? STRIPPED_BASE : LIB_BASE);
	}
	CHECK(symbolizer__load_bias(s, FAKE_PID, bins[pie].dev, bins[pie].inode, &bias) == 0,
	      "fx_pie: no bias");
	CHECK_U64(bias, PIE_BASE);
	CHECK(symbolizer__find_exports(s, FAKE_PID, 1, 2, names, 2, out) == -ENOENT,
	      "a binary the process does not map");
	CHECK(symbolizer__binaries(s, FAKE_PID + 1, bins, 16) == -ESRCH, "no such process");
}

int main(void);

/* Data as well as functions, in this very process: the addresses the compiler gave them. */
int test_symbolize_data = 7;

static void test_exports_self(void)
{
	static const char *const names[] = {"test_symbolize_data", "main"};
	struct symbolizer_opts o = {.proc_root = "/proc",
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 4,
				    .max_dsos = 4};
	struct symbolizer *s = symbolizer__new(&o);
	struct process_binary bins[256];
	struct dso_symbol out[2];
	int n = s ? symbolizer__binaries(s, getpid(), bins, 256) : -1, exe = -1;
	uint64_t bias = 0;

	for (int i = 0; i < n && i < 256; i++)
		exe = bins[i].is_exe ? i : exe;
	CHECK(exe >= 0, "this program among its %d binaries", n);
	if (exe >= 0) {
		int found = symbolizer__find_exports(s, getpid(), bins[exe].dev, bins[exe].inode,
						     names, 2, out);

		CHECK(found == 2, "%d found in %s", found, bins[exe].path);
		CHECK(symbolizer__load_bias(s, getpid(), bins[exe].dev, bins[exe].inode, &bias) ==
			      0,
		      "no bias");
		CHECK_U64(out[0].addr + bias, (uintptr_t)&test_symbolize_data);
		CHECK_U64(out[0].size, sizeof(test_symbolize_data));
		CHECK_U64(out[1].addr + bias, (uintptr_t)&main);
	}
	symbolizer__delete(s);
}

int main(void)
{
	struct symbolizer_opts o = {
		.kallsyms_path = "tests/fixtures/kallsyms/mixed", .max_procs = 16, .max_dsos = 16};
	struct symbolizer *s;

	fake_proc__create();
	o.proc_root = root;
	s = symbolizer__new(&o);
	CHECK(s != NULL, "symbolizer__new: %s", strerror(errno));
	if (s) {
		test_user_frames(s);
		test_exports(s);
		test_exited(s);
		/* Gone: its snapshot still names its binaries, but nothing of it can be read. */
		CHECK(symbolizer__binaries(s, FAKE_PID, (struct process_binary[1]){0}, 1) == -ESRCH,
		      "an exited process");
		symbolizer__delete(s);
	}
	test_watched_binaries();
	test_held_collisions();
	test_kernel();
	test_exports_self();
	fake_proc__remove();
	return check_summary("test_symbolize");
}
