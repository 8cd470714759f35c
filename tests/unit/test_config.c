// SPDX-License-Identifier: BSD-2-Clause
/* The flag value parsers: good values, and bad ones rejected with a message naming the fix.
 * (Durations and the other option types: test_options.c.) */
#include <errno.h>

#include "check.h"
#include "model/config.h"

static void test_frequency(void)
{
	char err[256];
	uint32_t hz = 0;

	CHECK(config__parse_frequency("99", &hz, err, sizeof(err)) == 0 && hz == 99, "hz %u", hz);
	CHECK(config__parse_frequency("10000", &hz, err, sizeof(err)) == 0, "10000 rejected");
	const char *bad[] = {"0", "-5", "10001", "abc", "99.5", "", "4294967396"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(config__parse_frequency(bad[i], &hz, err, sizeof(err)) == -EINVAL,
		      "'%s' accepted", bad[i]);
		CHECK(strstr(err, "frequency") != NULL, "message for '%s': %s", bad[i], err);
	}
}

static void test_pids(void)
{
	struct config c;
	char err[256];

	config__defaults(&c);
	CHECK(config__parse_pids(&c, "12", err, sizeof(err)) == 0, "12: %s", err);
	CHECK(config__parse_pids(&c, "3,4,5", err, sizeof(err)) == 0, "3,4,5: %s", err);
	CHECK_U64(c.nr_pids, 4);
	CHECK(c.pids[0] == 12 && c.pids[1] == 3 && c.pids[3] == 5, "pids %d %d %d", c.pids[0],
	      c.pids[1], c.pids[3]);
	const char *bad[] = {"", ",", "1,,2", "abc", "-1", "0", "1,", "99999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(config__parse_pids(&c, bad[i], err, sizeof(err)) < 0, "'%s' accepted",
		      bad[i]);
		CHECK(strstr(err, "PID") != NULL || strstr(err, "--pid") != NULL,
		      "message for '%s': %s", bad[i], err);
	}
}

static void test_outputs(void)
{
	struct config c;
	char err[256];

	config__defaults(&c);
	CHECK(config__add_output(&c, "x.pb.gz", err, sizeof(err)) == 0, "%s", err);
	CHECK(config__add_output(&c, "dir/y.folded", err, sizeof(err)) == 0, "%s", err);
	CHECK(c.nr_outputs == 2 && c.outputs[0].format == OUTPUT_PPROF &&
		      c.outputs[1].format == OUTPUT_FOLDED,
	      "formats %d %d", c.outputs[0].format, c.outputs[1].format);
	CHECK(config__add_output(&c, "x.otlp.pb", err, sizeof(err)) == 0, "%s", err);
	CHECK(config__add_output(&c, "x.otlp.json", err, sizeof(err)) == 0, "%s", err);
	CHECK(c.nr_outputs == 4 && c.outputs[2].format == OUTPUT_OTLP_PB &&
		      c.outputs[3].format == OUTPUT_OTLP_JSON,
	      "otlp formats");
	CHECK(config__add_output(&c, "x.json", err, sizeof(err)) == -EINVAL, "x.json accepted");
	CHECK(config__add_output(&c, "x.txt", err, sizeof(err)) == -EINVAL, "x.txt accepted");
	CHECK(strstr(err, ".pb.gz") && strstr(err, ".folded"), "message: %s", err);
	CHECK(strstr(err, ".html") != NULL, "message lists .html: %s", err);
	CHECK(config__add_output(&c, "flame.html", err, sizeof(err)) == 0, "%s", err);
	CHECK(c.nr_outputs == 5 && c.outputs[4].format == OUTPUT_HTML, "html format %d",
	      c.outputs[4].format);
	CHECK(config__add_output(&c, ".pb.gz", err, sizeof(err)) == -EINVAL, "bare .pb.gz");
	CHECK_U64(c.nr_outputs, 5);
}

static void test_count(void)
{
	size_t n = 0;
	char err[128];

	CHECK(options__parse_count("10", 1, 1000, &n, err, sizeof(err)) == 0 && n == 10, "n=%zu",
	      n);
	CHECK(options__parse_count("0", 1, 1000, &n, err, sizeof(err)) == -EINVAL, "0 accepted");
	CHECK(options__parse_count("+5", 1, 1000, &n, err, sizeof(err)) == -EINVAL, "+5 accepted");
}

static void test_types(void)
{
	struct config c;
	char err[256];

	config__defaults(&c);
	CHECK(c.types == PROFILE_TYPE_CPU, "default types %u", c.types);
	CHECK(config__parse_types(&c, "wall,cpu", err, sizeof(err)) == 0, "%s", err);
	CHECK(c.types == (PROFILE_TYPE_CPU | PROFILE_TYPE_WALL), "types %u", c.types);
	CHECK(config__parse_types(&c, "offcpu", err, sizeof(err)) == 0, "%s", err);
	CHECK(c.types == PROFILE_TYPE_OFFCPU, "types %u", c.types);
	CHECK(config__parse_types(&c, "cpu,heap", err, sizeof(err)) == -EINVAL, "heap accepted");
	CHECK(strstr(err, "'heap'") != NULL, "message: %s", err);
	CHECK(config__parse_types(&c, "", err, sizeof(err)) == -EINVAL, "empty accepted");
	CHECK(c.types == PROFILE_TYPE_OFFCPU, "a bad list changed the types: %u", c.types);
}

int main(void)
{
	test_types();
	test_frequency();
	test_pids();
	test_outputs();
	test_count();
	return check_summary("test_config");
}
