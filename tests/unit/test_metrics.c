// SPDX-License-Identifier: BSD-2-Clause
/*
 * The Prometheus text writer: exact text for a few families, escaping and UTF-8 repair, rejected
 * names, the size cap, special values; and the /proc/self reader on the real /proc and on fake
 * /proc trees (well-formed and broken) written under a temporary directory.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "agent/metrics.h"

static void test_families(void)
{
	struct metrics_text m;
	struct metrics_label dropped[] = {{"reason", "queue_full"}};
	struct metrics_label sent[][2] = {
		{{"type", "cpu"}, {"transport", "otlp"}},
		{{"type", "offcpu"}, {"transport", "otlp"}},
	};

	metrics_text__init(&m, 0);
	CHECK(metrics_text__family(&m, "hostprof_samples_total", METRICS_COUNTER,
				   "Samples drained from the kernel.") == 0,
	      "family");
	CHECK(metrics_text__sample_u64(&m, "hostprof_samples_total", NULL, 0,
				       18446744073709551615ULL) == 0,
	      "u64 sample");
	CHECK(metrics_text__family(&m, "hostprof_profiles_sent_total", METRICS_COUNTER,
				   "Profiles delivered.") == 0,
	      "family 2");
	CHECK(metrics_text__sample(&m, "hostprof_profiles_sent_total", sent[0], 2, 12) == 0, "s");
	CHECK(metrics_text__sample(&m, "hostprof_profiles_sent_total", sent[1], 2, 3) == 0, "s");
	CHECK(metrics_text__family(&m, "hostprof_dropped_total", METRICS_COUNTER, NULL) == 0,
	      "family without help");
	CHECK(metrics_text__sample(&m, "hostprof_dropped_total", dropped, 1, 0) == 0, "s");
	CHECK(metrics_text__single(&m, "hostprof_queue_bytes", METRICS_GAUGE, "", 1536) == 0,
	      "single");
	CHECK(metrics_text__single(&m, "hostprof:ratio", METRICS_GAUGE, "A ratio.", 0.25) == 0,
	      "colon in a metric name");
	CHECK_STR(m.buf, "# HELP hostprof_samples_total Samples drained from the kernel.\n"
			 "# TYPE hostprof_samples_total counter\n"
			 "hostprof_samples_total 18446744073709551615\n"
			 "# HELP hostprof_profiles_sent_total Profiles delivered.\n"
			 "# TYPE hostprof_profiles_sent_total counter\n"
			 "hostprof_profiles_sent_total{type=\"cpu\",transport=\"otlp\"} 12\n"
			 "hostprof_profiles_sent_total{type=\"offcpu\",transport=\"otlp\"} 3\n"
			 "# TYPE hostprof_dropped_total counter\n"
			 "hostprof_dropped_total{reason=\"queue_full\"} 0\n"
			 "# TYPE hostprof_queue_bytes gauge\n"
			 "hostprof_queue_bytes 1536\n"
			 "# HELP hostprof:ratio A ratio.\n"
			 "# TYPE hostprof:ratio gauge\n"
			 "hostprof:ratio 0.25\n");
	CHECK_U64(m.len, strlen(m.buf));
	CHECK(!m.truncated, "not truncated");

	/* A family is declared once; samples belong to the family just declared. */
	{
		size_t len = m.len;

		CHECK(metrics_text__family(&m, "hostprof_samples_total", METRICS_COUNTER, "x") ==
			      -EEXIST,
		      "second declaration");
		CHECK(metrics_text__sample(&m, "hostprof_samples_total", NULL, 0, 1) == -EINVAL,
		      "sample of an earlier family");
		CHECK(metrics_text__sample(&m, "hostprof_undeclared", NULL, 0, 1) == -EINVAL,
		      "sample of no family");
		CHECK(metrics_text__family(&m, "x", (enum metrics_type)7, NULL) == -EINVAL,
		      "bad type");
		CHECK_U64(m.len, len);
	}

	/* Reset keeps the buffer but forgets the text and the families. */
	metrics_text__reset(&m);
	CHECK_U64(m.len, 0);
	CHECK_STR(m.buf, "");
	CHECK(metrics_text__single(&m, "hostprof_samples_total", METRICS_COUNTER, NULL, 5) == 0,
	      "declared again after reset");
	CHECK_STR(m.buf, "# TYPE hostprof_samples_total counter\nhostprof_samples_total 5\n");
	metrics_text__release(&m);
	CHECK(m.buf == NULL && m.len == 0, "released");
	metrics_text__release(&m); /* twice is fine */
	metrics_text__release(NULL);

	/* Many families: the family set grows and still finds every one. */
	metrics_text__init(&m, 0);
	{
		char name[32];
		int ok = 1;

		for (int i = 0; i < 1000; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			ok &= metrics_text__single(&m, name, METRICS_GAUGE, NULL, i) == 0;
		}
		CHECK(ok, "1000 families");
		for (int i = 0; i < 1000; i += 37) {
			snprintf(name, sizeof(name), "f%d", i);
			ok &= metrics_text__family(&m, name, METRICS_GAUGE, NULL) == -EEXIST;
		}
		CHECK(ok, "each found again");
		CHECK(strstr(m.buf, "\nf999 999\n") != NULL, "last sample");
	}
	metrics_text__release(&m);
}

static void test_escaping(void)
{
	struct metrics_text m;
	struct metrics_label l[] = {
		{"path", "C:\\dir\\\"quoted\"\nnext"},
		{"comm", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"}, /* valid UTF-8 stays */
		{"bytes", "a\xff"
			  "b\xc3"
			  "c\xe0\x80\xaf"
			  "d"}, /* invalid: U+FFFD each */
		{"empty", ""},
	};

	metrics_text__init(&m, 0);
	CHECK(metrics_text__family(&m, "t", METRICS_GAUGE,
				   "Help with \\ backslash, \"quotes\" and\nnewline.") == 0,
	      "family");
	CHECK(metrics_text__sample(&m, "t", l, 4, 1) == 0, "sample");
	CHECK_STR(m.buf, "# HELP t Help with \\\\ backslash, \"quotes\" and\\nnewline.\n"
			 "# TYPE t gauge\n"
			 "t{path=\"C:\\\\dir\\\\\\\"quoted\\\"\\nnext\","
			 "comm=\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\","
			 "bytes=\"a\xef\xbf\xbd"
			 "b\xef\xbf\xbd"
			 "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			 "d\","
			 "empty=\"\"} 1\n");
	metrics_text__release(&m);
}

static void test_invalid_names(void)
{
	static const char *const bad_metric[] = {"", "1abc", "a-b", "a b", "a.b", "é", "a{}"};
	static const char *const bad_label[] = {"", "1a", "a:b", "a-b", "__name__", "__x", "a b"};
	struct metrics_text m;
	struct metrics_label l[2] = {{"ok", "v"}, {"ok", "w"}};

	metrics_text__init(&m, 0);
	for (size_t i = 0; i < sizeof(bad_metric) / sizeof(bad_metric[0]); i++) {
		CHECK(!metrics__valid_metric_name(bad_metric[i]), "\"%s\"", bad_metric[i]);
		CHECK(metrics_text__family(&m, bad_metric[i], METRICS_GAUGE, "h") == -EINVAL,
		      "family \"%s\"", bad_metric[i]);
	}
	CHECK(!metrics__valid_metric_name(NULL), "NULL name");
	CHECK(metrics__valid_metric_name(":a") && metrics__valid_metric_name("_a1:b"), "valid");
	CHECK(metrics__valid_label_name("_a") && metrics__valid_label_name("le"), "valid labels");

	CHECK(metrics_text__family(&m, "good", METRICS_GAUGE, NULL) == 0, "family");
	for (size_t i = 0; i < sizeof(bad_label) / sizeof(bad_label[0]); i++) {
		struct metrics_label one = {bad_label[i], "v"};

		CHECK(!metrics__valid_label_name(bad_label[i]), "\"%s\"", bad_label[i]);
		CHECK(metrics_text__sample(&m, "good", &one, 1, 1) == -EINVAL, "label \"%s\"",
		      bad_label[i]);
	}
	CHECK(metrics_text__sample(&m, "good", l, 2, 1) == -EINVAL, "duplicate label");
	l[1].value = NULL;
	l[1].name = "other";
	CHECK(metrics_text__sample(&m, "good", l, 2, 1) == -EINVAL, "NULL value");
	CHECK(metrics_text__sample(&m, "good", NULL, 1, 1) == -EINVAL, "NULL labels");
	CHECK(metrics_text__sample(&m, "bad name", NULL, 0, 1) == -EINVAL, "sample name");
	/* Nothing invalid was written. */
	CHECK_STR(m.buf, "# TYPE good gauge\n");
	metrics_text__release(&m);
}

static void test_values(void)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0, "0"},
		{-0.0, "0"},
		{1, "1"},
		{-42, "-42"},
		{1e15, "1000000000000000"},
		{9007199254740993.0, "9007199254740992"}, /* 2^53 + 1 is not a double */
		{0.1, "0.1"},
		{1.0 / 3, "0.3333333333333333"},
		{-2.5e-7, "-2.5e-07"},
		{1e300, "1e+300"},
		{123456.789, "123456.789"},
		{INFINITY, "+Inf"},
		{-INFINITY, "-Inf"},
		{NAN, "NaN"},
	};
	struct metrics_text m;
	char want[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		metrics_text__init(&m, 0);
		metrics_text__family(&m, "v", METRICS_GAUGE, NULL);
		CHECK(metrics_text__sample(&m, "v", NULL, 0, cases[i].v) == 0, "case %zu", i);
		snprintf(want, sizeof(want), "# TYPE v gauge\nv %s\n", cases[i].want);
		CHECK_STR(m.buf, want);
		metrics_text__release(&m);
	}

	/* Every printed non-integral value reads back to the same double. */
	{
		int ok = 1;

		srand(7);
		for (int i = 0; i < 2000; i++) {
			double v = (rand() - RAND_MAX / 2) * 1e-3 / (1 + rand() % 1000);
			const char *p;

			metrics_text__init(&m, 0);
			metrics_text__family(&m, "v", METRICS_GAUGE, NULL);
			metrics_text__sample(&m, "v", NULL, 0, v);
			p = strrchr(m.buf, ' ');
			ok &= p && strtod(p + 1, NULL) == v;
			metrics_text__release(&m);
		}
		CHECK(ok, "round trip");
	}
}

static void test_cap(void)
{
	struct metrics_text m;
	struct metrics_label l = {"i", NULL};
	char value[16];
	int i, err = 0;

	metrics_text__init(&m, 200);
	CHECK(metrics_text__family(&m, "series", METRICS_GAUGE, "Many series.") == 0, "family");
	for (i = 0; i < 100 && !err; i++) {
		snprintf(value, sizeof(value), "%d", i);
		l.value = value;
		err = metrics_text__sample(&m, "series", &l, 1, i);
	}
	CHECK(err == -E2BIG, "the cap is reached: %d", err);
	CHECK(m.truncated, "marked truncated");
	CHECK(m.len <= 200, "len %zu within the cap", m.len);
	CHECK_U64(m.len, strlen(m.buf));
	CHECK(m.len > 0 && m.buf[m.len - 1] == '\n', "ends on a whole line");
	/* Lines: HELP, TYPE and whole samples: each sample "series{i="N"} N\n". */
	{
		int lines = 0;

		for (size_t k = 0; k < m.len; k++)
			lines += m.buf[k] == '\n';
		CHECK(lines == i + 1, "%d lines for %d samples tried", lines, i);
	}
	/* Sticky: even what would fit is refused, so no family is silently half-written. */
	CHECK(metrics_text__sample(&m, "series", NULL, 0, 1) == -E2BIG, "sample after");
	CHECK(metrics_text__family(&m, "x", METRICS_GAUGE, NULL) == -E2BIG, "family after");
	metrics_text__reset(&m);
	CHECK(!m.truncated && m.len == 0, "reset clears truncation");
	metrics_text__release(&m);

	/* A family header that does not fit whole is not written at all. */
	metrics_text__init(&m, 40);
	CHECK(metrics_text__family(&m, "abc", METRICS_GAUGE,
				   "A help text long enough to pass the cap.") == -E2BIG,
	      "header too long");
	CHECK(m.len == 0 && (!m.buf || !m.buf[0]), "nothing written");
	metrics_text__release(&m);

	/* Exactly at the cap is fine. */
	metrics_text__init(&m, strlen("# TYPE a gauge\na 1\n"));
	CHECK(metrics_text__single(&m, "a", METRICS_GAUGE, NULL, 1) == 0, "exact fit");
	CHECK(!m.truncated, "exact fit not truncated");
	metrics_text__release(&m);
}

static void test_self_real(void)
{
	struct metrics_self s;
	struct metrics_text m;
	volatile double x = 0;

	/* Burn a little CPU so the reading has something to count. */
	for (int i = 0; i < 20000000; i++)
		x += i;
	CHECK(x > 0, "burnt");
	CHECK(metrics__self(&s) == 0, "metrics__self");
	CHECK(s.cpu_seconds >= 0 && s.cpu_seconds < 3600, "cpu %f", s.cpu_seconds);
	CHECK(s.resident_bytes > 100 * 1024, "rss %" PRIu64, s.resident_bytes);
	CHECK(s.resident_bytes < (8ULL << 30), "rss %" PRIu64, s.resident_bytes);
	CHECK(s.virtual_bytes >= s.resident_bytes, "vsize %" PRIu64, s.virtual_bytes);
	CHECK(s.threads >= 1, "threads %" PRIu64, s.threads);
	CHECK(s.open_fds >= 3, "fds %" PRIu64, s.open_fds);
	CHECK(s.max_fds >= s.open_fds, "max fds %" PRIu64, s.max_fds);
	{
		double now = (double)time(NULL);

		CHECK(s.start_time_seconds > now - 3600 && s.start_time_seconds <= now + 2,
		      "start %f, now %f", s.start_time_seconds, now);
	}

	metrics_text__init(&m, 0);
	CHECK(metrics__write_self(&m, &s) == 0, "write_self");
	CHECK(strstr(m.buf, "# TYPE process_cpu_seconds_total counter\n") != NULL, "%s", m.buf);
	CHECK(strstr(m.buf, "\nprocess_resident_memory_bytes ") != NULL, "%s", m.buf);
	CHECK(strstr(m.buf, "\nprocess_start_time_seconds ") != NULL, "%s", m.buf);
	CHECK(strstr(m.buf, "\nprocess_open_fds ") != NULL, "%s", m.buf);
	CHECK(strstr(m.buf, "\nprocess_max_fds ") != NULL, "%s", m.buf);
	metrics_text__release(&m);
}

/* --- fake /proc trees --- */

static char fake_root[64];

static void write_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void remove_fake(void)
{
	static const char *const files[] = {"self/stat", "self/limits", "stat",
					    "self/fd/0", "self/fd/1",	"self/fd/7"};
	char path[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fake_root, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/self/fd", fake_root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/self", fake_root);
	rmdir(path);
	rmdir(fake_root);
}

/* A stat line with comm "a) b (c" and the fields up to rss, as proc(5) numbers them. */
#define FAKE_STAT                                                                                  \
	"4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 "                                     \
	"250 50 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 "     \
	"0 17 3 0 0 0 0 0\n"

static void test_self_fixtures(void)
{
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct metrics_self s;
	char path[256];

	snprintf(fake_root, sizeof(fake_root), "/tmp/hostprof-metrics-XXXXXX");
	if (!mkdtemp(fake_root)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/self", fake_root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/self/fd", fake_root);
	mkdir(path, 0700);
	write_file("self/fd/0", "");
	write_file("self/fd/1", "");
	write_file("self/fd/7", "");

	/* Only stat: the optional facts stay 0. */
	write_file("self/stat", FAKE_STAT);
	CHECK(metrics__self_read(fake_root, &s) == 0, "stat only");
	CHECK(fabs(s.cpu_seconds - 300.0 / ticks) < 1e-9, "cpu %f", s.cpu_seconds);
	CHECK_U64(s.threads, 3);
	CHECK_U64(s.virtual_bytes, 104857600);
	CHECK_U64(s.resident_bytes, 2560ULL * page);
	CHECK(s.start_time_seconds == 0, "no btime: %f", s.start_time_seconds);
	CHECK_U64(s.open_fds, 3);
	CHECK_U64(s.max_fds, 0);

	write_file("stat", "cpu  1 2 3\ncpu0 1 2 3\nintr 5\nctxt 9\nbtime 1700000000\n");
	write_file("self/limits", "Limit                     Soft Limit           Hard Limit  "
				  "         Units     \n"
				  "Max cpu time              unlimited            unlimited      "
				  "      seconds   \n"
				  "Max open files            1024                 524288         "
				  "      files     \n");
	CHECK(metrics__self_read(fake_root, &s) == 0, "full");
	CHECK(fabs(s.start_time_seconds - (1700000000.0 + 12345.0 / ticks)) < 1e-6, "start %f",
	      s.start_time_seconds);
	CHECK_U64(s.max_fds, 1024);

	/* Broken stat files are refused, never half read. */
	{
		static const char *const broken[] = {
			"",
			"4242 (no closing paren S 1 2 3\n",
			"4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50\n", /* short */
			"4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 -250 50 0 0 20 0 3 0 12345 "
			"104857600 2560\n", /* negative utime */
			"4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 12345 "
			"104857600 25x60\n", /* junk in rss */
			"4242 (x)S 1\n",
		};

		for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
			write_file("self/stat", broken[i]);
			CHECK(metrics__self_read(fake_root, &s) == -EINVAL, "broken %zu", i);
		}
	}
	/* A file that ends right after rss is complete. */
	write_file("self/stat", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 4096 2");
	CHECK(metrics__self_read(fake_root, &s) == 0, "ends at rss");
	CHECK_U64(s.resident_bytes, 2ULL * page);

	remove_fake();
	CHECK(metrics__self_read(fake_root, &s) == -ENOENT, "missing root");
}

int main(void)
{
	test_families();
	test_escaping();
	test_invalid_names();
	test_values();
	test_cap();
	test_self_real();
	test_self_fixtures();
	return check_summary("test_metrics");
}
