// SPDX-License-Identifier: BSD-2-Clause
/*
 * What one OTLP export costs: for a synthetic whole-host profile (10k distinct stacks over ~50
 * processes), the size of the ExportProfilesServiceRequest raw and gzipped, the same for
 * OTLP/JSON, the same data as gzipped pprof, and the time to encode (median of several runs).
 * It prints numbers and asserts nothing; run it with `make bench-otlp`.
 *
 * The profile is built through the model's own interning API from a fixed seed, so two runs (and
 * two machines) measure the same input.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/encode.h"
#include "model/profile.h"

#define NR_PROCESSES 50
#define NR_STACKS 10000
#define NR_APP_FUNCS 4000 /* spread over the processes' executables */
#define NR_LIBC_FUNCS 300
#define NR_KERNEL_FUNCS 400
#define MAX_DEPTH 48
#define THREADS_PER_PROCESS 8
#define HZ 99
#define RUNS 9

struct rng {
	uint64_t s;
};

/* xorshift64*: fast, and the same sequence everywhere for a given seed. */
static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(rng_next(r) % n);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The gzip size of buf, as an HTTP client with Content-Encoding: gzip would send it. */
static long gzip_size(const void *buf, size_t len)
{
	z_stream zs = {0};
	uint8_t *out;
	size_t cap;
	long ret = -1;

	if (len > UINT_MAX || deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
					   Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&zs, len);
	out = malloc(cap);
	if (out) {
		zs.next_in = (uint8_t *)buf;
		zs.avail_in = len;
		zs.next_out = out;
		zs.avail_out = cap;
		if (deflate(&zs, Z_FINISH) == Z_STREAM_END)
			ret = (long)zs.total_out;
	}
	free(out);
	deflateEnd(&zs);
	return ret;
}

static uint32_t intern(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	if (idx < 0) {
		fprintf(stderr, "bench_otlp: string: %s\n", strerror((int)-idx));
		exit(1);
	}
	return (uint32_t)idx;
}

static uint32_t must(int64_t idx, const char *what)
{
	if (idx < 0) {
		fprintf(stderr, "bench_otlp: %s: %s\n", what, strerror((int)-idx));
		exit(1);
	}
	return (uint32_t)idx;
}

static void hex_id(struct rng *r, char *out, size_t nbytes)
{
	for (size_t i = 0; i < nbytes; i++)
		sprintf(out + 2 * i, "%02x", (unsigned)(rng_next(r) & 0xff));
}

struct proc {
	uint32_t pid;
	uint32_t exe_mapping, libc_mapping;
	uint32_t exe_name;
	uint32_t first_func; /* this executable's share of the app functions */
	uint32_t nr_funcs;
};

/*
 * Per process: its executable (own build-id) and libc (one build-id for all, but mapped at
 * a different address in each process, so a mapping per process as in real profiles). Stacks
 * are leaf first: some kernel frames, some libc frames, the rest in the executable, with one
 * frame in twenty unresolved.
 */
static struct profile *build_profile(void)
{
	const struct profile_desc desc = {
		.sample_type = "cpu",
		.sample_unit = "nanoseconds",
		.period_type = "cpu",
		.period_unit = "nanoseconds",
		.period = 1000000000LL / HZ,
		.time_nanos = 1700000000000000000ULL,
		.duration_nanos = 10000000000ULL,
	};
	struct profile *p = profile__new(&desc);
	struct proc procs[NR_PROCESSES];
	uint32_t app_funcs[NR_APP_FUNCS], libc_funcs[NR_LIBC_FUNCS], kernel_funcs[NR_KERNEL_FUNCS];
	struct rng r = {0x9e3779b97f4a7c15ULL};
	char buf[256], libc_build_id[41];
	uint32_t libc_file;

	if (!p) {
		perror("bench_otlp: profile__new");
		exit(1);
	}
	hex_id(&r, libc_build_id, 20);
	libc_file = intern(p, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	for (uint32_t i = 0; i < NR_APP_FUNCS; i++) {
		struct profile_function f;

		snprintf(buf, sizeof(buf), "app::module%02u::function_%04u", i % 37, i);
		f.name = f.system_name = intern(p, buf);
		snprintf(buf, sizeof(buf), "src/module%02u.cc", i % 37);
		f.filename = intern(p, buf);
		app_funcs[i] = must(profile__function(p, &f), "function");
	}
	for (uint32_t i = 0; i < NR_LIBC_FUNCS; i++) {
		struct profile_function f = {0};

		snprintf(buf, sizeof(buf), "__libc_function_%03u", i);
		f.name = f.system_name = intern(p, buf);
		libc_funcs[i] = must(profile__function(p, &f), "function");
	}
	for (uint32_t i = 0; i < NR_KERNEL_FUNCS; i++) {
		struct profile_function f = {0};

		snprintf(buf, sizeof(buf), "kernel_function_%03u", i);
		f.name = f.system_name = intern(p, buf);
		kernel_funcs[i] = must(profile__function(p, &f), "function");
	}

	for (uint32_t i = 0; i < NR_PROCESSES; i++) {
		struct profile_mapping exe = {0}, libc = {0};
		struct profile_process proc = {.pid = 1000 + i * 17};
		char build_id[41], htlhash[33];

		exe.start = 0x555555554000ULL + ((uint64_t)i << 24);
		exe.limit = exe.start + 0x800000;
		snprintf(buf, sizeof(buf), "/usr/bin/service-%02u", i);
		exe.filename = intern(p, buf);
		hex_id(&r, build_id, 20);
		hex_id(&r, htlhash, 16);
		exe.build_id = intern(p, build_id);
		exe.htlhash = intern(p, htlhash);
		exe.has_functions = true;
		libc.start = 0x7f0000000000ULL + ((uint64_t)i << 32);
		libc.limit = libc.start + 0x200000;
		libc.offset = 0x28000;
		libc.filename = libc_file;
		libc.build_id = intern(p, libc_build_id);
		libc.has_functions = true;

		procs[i].pid = proc.pid;
		procs[i].exe_mapping = must(profile__mapping(p, &exe), "mapping");
		procs[i].libc_mapping = must(profile__mapping(p, &libc), "mapping");
		/* Processes share executables in groups of five, as replicas would. */
		procs[i].nr_funcs = NR_APP_FUNCS / (NR_PROCESSES / 5);
		procs[i].first_func = (i / 5) * procs[i].nr_funcs;

		snprintf(buf, sizeof(buf), "service-%02u", i);
		proc.service_name = intern(p, buf);
		proc.exe_name = proc.service_name;
		procs[i].exe_name = proc.exe_name;
		proc.exe_path = exe.filename;
		snprintf(buf, sizeof(buf), "/usr/bin/service-%02u --config /etc/service-%02u.yaml",
			 i, i);
		proc.command_line = intern(p, buf);
		if (i % 3 == 0) {
			char cid[65];

			hex_id(&r, cid, 32);
			proc.container_id = intern(p, cid);
		}
		if (profile__set_process(p, &proc) < 0) {
			fprintf(stderr, "bench_otlp: set_process failed\n");
			exit(1);
		}
	}

	while (profile__nr_stacks(p) - 1 < NR_STACKS) {
		const struct proc *pr = &procs[rng_below(&r, NR_PROCESSES)];
		uint32_t locs[MAX_DEPTH], depth = 8 + rng_below(&r, MAX_DEPTH - 8);
		uint32_t nr_kernel = rng_below(&r, 10) < 3 ? 1 + rng_below(&r, 6) : 0;
		uint32_t nr_libc = rng_below(&r, 4);
		struct profile_labels lb = {.pid = pr->pid};
		int64_t count;

		for (uint32_t d = 0; d < depth; d++) {
			struct profile_location l = {0};

			if (d < nr_kernel) {
				uint32_t k = rng_below(&r, NR_KERNEL_FUNCS);

				l.kind = FRAME_KERNEL;
				l.function = kernel_funcs[k];
				l.address =
					0xffffffff81000000ULL + k * 0x400 + rng_below(&r, 4) * 8;
			} else if (d < nr_kernel + nr_libc) {
				uint32_t k = rng_below(&r, NR_LIBC_FUNCS);

				l.mapping = pr->libc_mapping;
				l.function = libc_funcs[k];
				l.address = 0x29000 + k * 0x200 + rng_below(&r, 4) * 4;
			} else {
				/* Callers near the root repeat more than leaves: skew toward the
				 * first functions for the outer frames. */
				uint32_t span = d > depth - 6 ? 16 : pr->nr_funcs;
				uint32_t k = pr->first_func + rng_below(&r, span);

				l.mapping = pr->exe_mapping;
				l.address = 0x10000 + k * 0x100 + rng_below(&r, 4) * 4;
				if (rng_below(&r, 20) == 0) {
					snprintf(buf, sizeof(buf), "[unknown] service-%02u+0x%llx",
						 (pr->pid - 1000) / 17,
						 (unsigned long long)l.address);
					l.label = intern(p, buf);
				} else {
					l.function = app_funcs[k];
				}
			}
			locs[d] = must(profile__location(p, &l), "location");
		}
		lb.tid = pr->pid + rng_below(&r, THREADS_PER_PROCESS);
		lb.comm = pr->exe_name;
		snprintf(buf, sizeof(buf), "worker-%u", lb.tid - pr->pid);
		lb.thread_name = intern(p, buf);
		count = 1 + rng_below(&r, 50);
		if (profile__add_sample(p, must(profile__stack(p, locs, depth), "stack"), &lb,
					count * desc.period, count) < 0) {
			fprintf(stderr, "bench_otlp: add_sample failed\n");
			exit(1);
		}
	}
	return p;
}

int main(void)
{
	struct otlp_opts o = {
		.host_name = "bench-host",
		.host_arch = "amd64",
		.scope_version = "bench",
	};
	char dir[] = "/tmp/hostprof-bench-otlp-XXXXXX", pprof_path[64];
	double t_bin[RUNS], t_json[RUNS], t_gzip[RUNS], t_pprof[RUNS];
	size_t bin_len = 0, json_len = 0;
	uint8_t *bin = NULL;
	char *json = NULL;
	struct profile *p;
	const struct profile *ps[1];
	struct stat st;
	long gz = -1, json_gz = -1;
	int err;

	p = build_profile();
	ps[0] = p;
	if (!mkdtemp(dir)) {
		perror("bench_otlp: mkdtemp");
		return 1;
	}
	snprintf(pprof_path, sizeof(pprof_path), "%s/profile.pb.gz", dir);

	for (int i = 0; i < RUNS; i++) {
		double t0;

		free(bin);
		free(json);
		bin = NULL;
		json = NULL;
		t0 = now_ms();
		err = enc_otlp__encode(ps, 1, &o, &bin, &bin_len);
		t_bin[i] = now_ms() - t0;
		if (err) {
			fprintf(stderr, "bench_otlp: encode: %s\n", strerror(-err));
			return 1;
		}
		t0 = now_ms();
		gz = gzip_size(bin, bin_len);
		t_gzip[i] = now_ms() - t0;
		t0 = now_ms();
		err = enc_otlp__encode_json(ps, 1, &o, &json, &json_len);
		t_json[i] = now_ms() - t0;
		if (err) {
			fprintf(stderr, "bench_otlp: encode json: %s\n", strerror(-err));
			return 1;
		}
		t0 = now_ms();
		err = enc_pprof__write(p, pprof_path);
		t_pprof[i] = now_ms() - t0;
		if (err) {
			fprintf(stderr, "bench_otlp: pprof: %s\n", strerror(-err));
			return 1;
		}
	}
	json_gz = gzip_size(json, json_len);
	if (stat(pprof_path, &st) < 0)
		st.st_size = -1;

	printf("bench_otlp: %d processes, %zu stacks, %zu samples, %zu locations, %zu functions, "
	       "%zu mappings, %zu strings in the model\n",
	       NR_PROCESSES, profile__nr_stacks(p) - 1, profile__nr_samples(p) - 1,
	       profile__nr_locations(p) - 1, profile__nr_functions(p) - 1,
	       profile__nr_mappings(p) - 1, profile__nr_strings(p) - 1);
	printf("  otlp protobuf request  %9zu bytes raw  %9ld bytes gzip\n", bin_len, gz);
	printf("  otlp json request      %9zu bytes raw  %9ld bytes gzip\n", json_len, json_gz);
	printf("  pprof (gzip)           %9s            %9lld bytes gzip\n", "",
	       (long long)st.st_size);
	printf("  encode otlp protobuf   %9.2f ms median of %d\n", median(t_bin, RUNS), RUNS);
	printf("  gzip otlp protobuf     %9.2f ms median of %d\n", median(t_gzip, RUNS), RUNS);
	printf("  encode otlp json       %9.2f ms median of %d\n", median(t_json, RUNS), RUNS);
	printf("  enc_pprof__write       %9.2f ms median of %d (gzip and fsync included)\n",
	       median(t_pprof, RUNS), RUNS);

	unlink(pprof_path);
	rmdir(dir);
	free(json);
	free(bin);
	profile__delete(p);
	return 0;
}
