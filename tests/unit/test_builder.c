// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sample batches into a profile through the symbolizer and a fake /proc: stack order (kernel
 * frames above user frames, leaf first), value = count * period, locations shared between samples,
 * names and labels, the address cache surviving being emptied when it fills up, and addresses
 * kept out of it while their binary's debug file is being fetched.
 */
#include "capture/builder.h"
#include "base/vec.h"
#include "check.h"
#include "symbols/debuginfod_fetch.h"
#include "fake_proc.h"

static struct raw_sample sample(uint32_t tid, uint64_t count, uint32_t nr_user, uint32_t nr_kern)
{
	struct raw_sample s = {.pid = FAKE_PID,
			       .tid = tid,
			       .count = count,
			       .nr_user = nr_user,
			       .nr_kern = nr_kern};

	snprintf(s.process_name, sizeof(s.process_name), "fakeproc");
	snprintf(s.thread_name, sizeof(s.thread_name), "worker-%u", tid);
	return s;
}

/* The first line of fixtures/name, without its newline; "" when it cannot be read. */
static void read_fixture_line(const char *name, char *out, size_t len)
{
	char path[3 * PATH_MAX];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(out, (int)len, f))
			out[0] = '\0';
		fclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
}

static const char *frame_name(const struct profile *p, const uint32_t *locs, size_t i)
{
	return profile__location_name(p, locs[i]);
}

/* full_cmdline: process.command_line full; else the builder's default, off. */
static void test_batch(size_t cache_cap, bool full_cmdline)
{
	struct profile_desc d = {.sample_type = "cpu",
				 .sample_unit = "nanoseconds",
				 .period_type = "cpu",
				 .period_unit = "nanoseconds",
				 .period = 10101010};
	struct symbolizer_opts o = {.proc_root = root,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 8,
				    .max_dsos = 8};
	uint64_t alpha = func_addr("fx_pie", "fx_alpha"), beta = func_addr("fx_pie", "fx_beta");
	uint64_t lib = func_addr("libfx.so", "fx_lib_alpha");
	struct profile *p = profile__new(&d);
	struct symbolizer *sym = symbolizer__new(&o);
	struct builder *b = p && sym ? builder__new(p, sym, cache_cap) : NULL;
	struct sample_batch batch = {0};
	size_t depth;

	CHECK(b != NULL, "setup failed: %s", strerror(errno));
	if (!b)
		goto out;
	if (full_cmdline)
		builder__set_cmdline_mode(b, CMDLINE_FULL);
	/* A kernel stack on top of a user stack: leaf fx_beta called from fx_alpha (a return
	 * address 4 bytes into it), called from the library. */
	uint64_t user[] = {PIE_BASE + beta + 2, PIE_BASE + alpha + 4, LIB_BASE + lib + 4};
	uint64_t kern[] = {0xffffffff81001010ULL, 0xffffffff81001020ULL};
	struct raw_sample s1 = sample(1, 5, 3, 2), s2 = sample(2, 7, 3, 0), s3 = sample(1, 2, 3, 2);

	CHECK(sample_batch__add(&batch, &s1, user, kern) == 0, "add");
	CHECK(sample_batch__add(&batch, &s2, user, kern) == 0, "add");
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, d.period) == 0, "first batch");
	/* A second drain with the first sample's stack again: merged into the same sample. */
	sample_batch__reset(&batch);
	CHECK(sample_batch__add(&batch, &s3, user, kern) == 0, "add");
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, d.period) == 0, "second batch");

	/* Samples: index 0 is the zero entry; tid 1 (5 + 2) and tid 2 (7). */
	CHECK_U64(profile__nr_samples(p), 3);
	for (size_t i = 1; i < profile__nr_samples(p); i++) {
		const struct profile_sample *ps = profile__sample_at(p, i);
		const uint32_t *locs = profile__stack_at(p, ps->stack, &depth);

		CHECK_STR(profile__string_at(p, ps->labels.comm), "fakeproc");
		if (ps->labels.tid == 1) {
			CHECK_U64(ps->count, 7);
			CHECK_U64(ps->value, 7 * d.period);
			CHECK_STR(profile__string_at(p, ps->labels.thread_name), "worker-1");
			CHECK_U64(depth, 5);
			if (depth != 5)
				continue;
			CHECK_STR(frame_name(p, locs, 0), "do_one_initcall");
			CHECK(profile__location_at(p, locs[0])->kind == FRAME_KERNEL, "kind");
			CHECK_STR(frame_name(p, locs, 2), "fx_beta");
			CHECK_STR(frame_name(p, locs, 3), "fx_alpha");
			CHECK_STR(frame_name(p, locs, 4), "fx_lib_alpha");
			/* The leaf is looked up at its own address, callers one byte back. */
			CHECK_U64(profile__location_at(p, locs[2])->address, beta + 2);
			CHECK_U64(profile__location_at(p, locs[3])->address, alpha + 3);
			CHECK(profile__location_at(p, locs[2])->mapping != 0, "user frame mapping");
			CHECK(profile__mapping_at(p, profile__location_at(p, locs[2])->mapping)
				      ->has_functions,
			      "has_functions not set");
		} else {
			CHECK_U64(ps->labels.tid, 2);
			CHECK_U64(ps->count, 7);
			CHECK_U64(depth, 3);
			if (depth == 3)
				CHECK_STR(frame_name(p, locs, 0), "fx_beta");
		}
	}
	/* Who the process is, recorded once. */
	const struct profile_process *proc = profile__find_process(p, FAKE_PID);

	CHECK(proc != NULL, "no process entry for %d", FAKE_PID);
	CHECK_U64(profile__nr_processes(p), 1);
	if (proc) {
		CHECK_STR(profile__string_at(p, proc->service_name), "fake-svc");
		/* Off by default: argv often carries tokens. */
		CHECK_STR(profile__string_at(p, proc->command_line),
			  full_cmdline ? "fakeproc --serve" : "");
		CHECK_STR(profile__string_at(p, proc->container_id), "");
	}
	/* The mapping carries the binary's file id, as python computed it. */
	{
		char want[64];
		const uint32_t *locs =
			profile__stack_at(p, profile__sample_at(p, 1)->stack, &depth);
		const struct profile_location *leaf =
			depth ? profile__location_at(p, locs[depth - 3]) : NULL;

		read_fixture_line("fx_pie.htlhash", want, sizeof(want));
		CHECK(leaf && leaf->mapping, "leaf mapping");
		if (leaf && leaf->mapping)
			CHECK_STR(profile__string_at(
					  p, profile__mapping_at(p, leaf->mapping)->htlhash),
				  want);
	}
	/* 3 user and 2 kernel addresses: 5 locations, however often they were seen. */
	CHECK_U64(profile__nr_locations(p), 6);
out:
	sample_batch__release(&batch);
	builder__delete(b);
	symbolizer__delete(sym);
	profile__delete(p);
}

/* The leaf's name in the one-frame stack of the profile's newest sample. */
static const char *newest_leaf(const struct profile *p)
{
	size_t n = profile__nr_samples(p), depth = 0;
	const uint32_t *locs =
		n > 1 ? profile__stack_at(p, profile__sample_at(p, n - 1)->stack, &depth) : NULL;

	return depth ? profile__location_name(p, locs[0]) : "";
}

/*
 * While debuginfod fetches a binary's debug file, its addresses stay out of the location cache:
 * the drain after the fetch names what the stripped library could not. The file is planted in
 * libdebuginfod's cache (libfx.so, whose .symtab the stripped copy lacks), so no server is needed;
 * DEBUGINFOD_URLS names a port nothing listens on.
 */
static void test_debug_pending(void)
{
	struct profile_desc d = {.sample_type = "cpu",
				 .sample_unit = "nanoseconds",
				 .period_type = "cpu",
				 .period_unit = "nanoseconds",
				 .period = 1};
	char hex[128] = "", cache[PATH_MAX + 32], cmd[8 * PATH_MAX];
	uint64_t hidden = func_addr("libfx.so", "fx_lib_hidden");
	uint64_t user[] = {STRIPPED_BASE + hidden + 4};
	struct raw_sample s = sample(1, 1, 1, 0);
	struct symbolizer_opts o = {.proc_root = root,
				    .kallsyms_path = "tests/fixtures/kallsyms/mixed",
				    .max_procs = 8,
				    .max_dsos = 8};
	struct debuginfod_fetch_opts fo = {.timeout_s = 10, .max_entries = 16};
	struct sample_batch batch = {0};
	struct debuginfod_fetch *f = NULL;
	struct profile *p = profile__new(&d);
	struct symbolizer *sym = NULL;
	struct builder *b = NULL;

	read_fixture_line("libfx-stripped.so.buildid", hex, sizeof(hex));
	CHECK(hex[0] && hidden, "fixtures missing: run make unit-fixtures");
	snprintf(cache, sizeof(cache), "%s/debuginfod-cache", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/%s && cp %s/libfx.so %s/%s/debuginfo", cache, hex,
		 fixtures, cache, hex);
	CHECK(hex[0] && system(cmd) == 0, "%s failed", cmd);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	o.fetch = f = debuginfod_fetch__new(&fo);
	sym = symbolizer__new(&o);
	b = p && sym ? builder__new(p, sym, 1024) : NULL;
	CHECK(f && b, "setup failed: %s", strerror(errno));
	if (!f || !b)
		goto out;

	CHECK(sample_batch__add(&batch, &s, user, NULL) == 0, "add");
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, 1) == 0, "while pending");
	CHECK(!strncmp(newest_leaf(p), "[unknown]", 9), "pending: %s", newest_leaf(p));
	CHECK_U64(debuginfod_fetch__wait(f, 10ULL * 1000000000), 0);
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, 1) == 0, "after the fetch");
	CHECK_STR(newest_leaf(p), "fx_lib_hidden");
	/* Settled: from now on the address is cached as usual. */
	uint64_t hits, misses, before;

	builder__cache_stats(b, &hits, &before);
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, 1) == 0, "cached");
	builder__cache_stats(b, &hits, &misses);
	CHECK(misses == before && hits > 0, "misses %" PRIu64 " -> %" PRIu64, before, misses);
out:
	sample_batch__release(&batch);
	builder__delete(b);
	symbolizer__delete(sym);
	debuginfod_fetch__delete(f);
	profile__delete(p);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
}

/*
 * Samples of more spans than a window may link (BUILDER_MAX_LINKS): the first spans keep their
 * link, the rest are kept without it and counted, and a span already linked stays linked.
 */
static void test_link_cap(void)
{
	struct profile_desc d = {.sample_type = "cpu", .sample_unit = "nanoseconds", .period = 1};
	struct symbolizer_opts o = {.proc_root = root, .max_procs = 8, .max_dsos = 8};
	struct profile *p = profile__new(&d);
	struct symbolizer *sym = symbolizer__new(&o);
	struct builder *b = p && sym ? builder__new(p, sym, 1024) : NULL;
	struct sample_batch batch = {0};
	size_t linked = 0, unlinked = 0, extra = 10, added = 0;
	struct hp_thread_ctx rec = {.valid = 1};

	CHECK(b != NULL, "setup failed: %s", strerror(errno));
	if (!b)
		goto out;
	for (size_t i = 0; i < BUILDER_MAX_LINKS + extra + 1; i++) {
		struct raw_sample s = sample(1, 1, 0, 0);
		/* The last sample is the first span again: still linked. */
		uint32_t span = i == BUILDER_MAX_LINKS + extra ? 0 : (uint32_t)i;

		memcpy(rec.span_id, &span, sizeof(span));
		rec.span_id[7] = 1;
		rec.trace_id[0] = 1;
		if (VEC_RESERVE(batch.tctx, batch.cap_tctx, batch.nr_tctx + 1))
			break;
		batch.tctx[batch.nr_tctx++] = rec;
		s.thread_ctx = (uint32_t)batch.nr_tctx;
		added += sample_batch__add(&batch, &s, NULL, NULL) == 0;
	}
	CHECK(added == BUILDER_MAX_LINKS + extra + 1, "added %zu samples", added);
	CHECK(builder__add_batch(b, &batch, BATCH_CPU, 1) == 0, "add_batch");
	for (size_t i = 1; i < profile__nr_samples(p); i++) {
		const struct profile_sample *ps = profile__sample_at(p, i);

		if (ps->labels.span_id)
			linked += (size_t)ps->count;
		else
			unlinked += (size_t)ps->count;
	}
	CHECK(linked == BUILDER_MAX_LINKS + 1 && unlinked == extra,
	      "%zu samples linked (want %d: the cap, and the first span again), %zu not (want "
	      "%zu)",
	      linked, BUILDER_MAX_LINKS + 1, unlinked, extra);
	CHECK(builder__links_dropped(b) == extra, "counted: %llu",
	      (unsigned long long)builder__links_dropped(b));
out:
	sample_batch__release(&batch);
	builder__delete(b);
	symbolizer__delete(sym);
	profile__delete(p);
}

/* sample_batch__next_pid(): each run of a process's samples once, PID 0 skipped, then 0. */
static void test_batch_pids(void)
{
	const uint32_t pids[] = {7, 7, 0, 9, 9, 9, 7, 0};
	struct sample_batch batch = {0};
	pid_t got[8];
	size_t at = 0, n = 0;
	pid_t pid;

	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		struct raw_sample s = sample(1, 1, 0, 0);

		s.pid = pids[i];
		CHECK(sample_batch__add(&batch, &s, NULL, NULL) == 0, "add");
	}
	while (n < 8 && (pid = sample_batch__next_pid(&batch, &at)) > 0)
		got[n++] = pid;
	CHECK_U64(n, 3);
	CHECK(n == 3 && got[0] == 7 && got[1] == 9 && got[2] == 7, "runs 7, 9, 7");
	CHECK(sample_batch__next_pid(&batch, &at) == 0, "then 0");
	at = 0;
	CHECK(sample_batch__next_pid(NULL, &at) == 0, "no batch");
	sample_batch__release(&batch);
}

int main(void)
{
	test_batch_pids();
	fake_proc__create();
	test_link_cap();
	test_batch(262144, true);
	/* The smallest cache is emptied again and again: the profile must not change. */
	test_batch(1, false);
	test_debug_pending();
	fake_proc__remove();
	return check_summary("test_builder");
}
