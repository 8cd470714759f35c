// SPDX-License-Identifier: BSD-2-Clause
/* The live status line's text for given numbers and terminal widths, and name shortening. */
#include <stdlib.h>

#include "check.h"
#include "cmd/status.h"

static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

static void test_with_duration(void)
{
	struct status_numbers n = {
		.elapsed_s = 2.5, .total_s = 5, .samples = 1234, .lost = 7, .processes = 12};
	char buf[512];
	size_t len = status__format(buf, sizeof(buf), &n, 100);

	CHECK_U64(len, strlen(buf));
	CHECK(len <= 99, "len %zu at width 100", len);
	CHECK(strstr(buf, "2.5s / 5.0s") == buf, "starts with the time: \"%s\"", buf);
	CHECK(strstr(buf, "1234 samples") != NULL, "samples: \"%s\"", buf);
	CHECK(strstr(buf, "7 lost") != NULL, "lost: \"%s\"", buf);
	CHECK(strstr(buf, "12 processes") != NULL, "processes: \"%s\"", buf);
	CHECK(strstr(buf, " 50%") != NULL, "percentage: \"%s\"", buf);
	CHECK(strchr(buf, '[') && strchr(buf, ']'), "bar: \"%s\"", buf);
	CHECK(strstr(buf, "Ctrl-C") == NULL, "no Ctrl-C hint with a duration: \"%s\"", buf);
	CHECK(!has_control(buf), "no control characters: \"%s\"", buf);

	/* Half the bar is filled, and the bar is capped so a wide terminal is not one long bar. */
	{
		const char *open = strchr(buf, '['), *close = strchr(buf, ']');
		size_t w = close - open - 1, fill = 0;

		for (const char *c = open + 1; c < close; c++)
			fill += *c == '#';
		CHECK(w >= 5 && w <= 30, "bar width %zu", w);
		CHECK(fill * 2 >= w - 1 && fill * 2 <= w + 1, "fill %zu of %zu", fill, w);
	}
	n.processes = 1;
	status__format(buf, sizeof(buf), &n, 100);
	CHECK(strstr(buf, "1 process") && !strstr(buf, "1 processes"), "singular: \"%s\"", buf);

	/* Past the end (the last drain runs late): clamped at 100%. */
	n.elapsed_s = 7;
	status__format(buf, sizeof(buf), &n, 100);
	CHECK(strstr(buf, "100%") != NULL, "clamped: \"%s\"", buf);
	CHECK(strstr(buf, ".]") == NULL, "bar full: \"%s\"", buf);
}

static void test_no_duration(void)
{
	struct status_numbers n = {.elapsed_s = 75, .samples = 99, .processes = 3};
	char buf[512];

	status__format(buf, sizeof(buf), &n, 80);
	CHECK(strstr(buf, "1m15s") == buf, "minutes: \"%s\"", buf);
	CHECK(strstr(buf, "Ctrl-C to stop") != NULL, "hint: \"%s\"", buf);
	CHECK(strchr(buf, '[') == NULL && strchr(buf, '%') == NULL, "no bar: \"%s\"", buf);
	CHECK(strstr(buf, "99 samples") && strstr(buf, "0 lost") && strstr(buf, "3 processes"),
	      "counts: \"%s\"", buf);

	n.elapsed_s = 3725;
	status__format(buf, sizeof(buf), &n, 80);
	CHECK(strstr(buf, "1h02m") == buf, "hours: \"%s\"", buf);
}

/* Every width keeps to width - 1 columns; narrow ones drop whole fields, never half of one. */
static void test_widths(void)
{
	struct status_numbers with = {.elapsed_s = 1.2,
				      .total_s = 3600,
				      .samples = 18446744073709551615ULL,
				      .lost = 123456789,
				      .processes = 4321};
	struct status_numbers without = with;
	char buf[512];

	without.total_s = 0;
	for (unsigned int w = 0; w <= 300; w++) {
		size_t a = status__format(buf, sizeof(buf), &with, w);
		size_t b;

		CHECK(a == strlen(buf) && a <= (w ? w - 1 : 0), "width %u: %zu", w, a);
		if (strstr(buf, "samples"))
			CHECK(strstr(buf, "18446744073709551615 samples") != NULL,
			      "width %u: whole number: \"%s\"", w, buf);
		b = status__format(buf, sizeof(buf), &without, w);
		CHECK(b == strlen(buf) && b <= (w ? w - 1 : 0), "width %u (no duration): %zu", w,
		      b);
		CHECK(!strstr(buf, "Ctrl") || strstr(buf, "Ctrl-C to stop"),
		      "width %u: whole hint: \"%s\"", w, buf);
	}
	/* 40 columns: the time and the percentage come first. */
	status__format(buf, sizeof(buf), &with, 40);
	CHECK(strstr(buf, "1.2s / 1h00m") == buf, "narrow: \"%s\"", buf);
	CHECK(strchr(buf, '%') != NULL, "narrow keeps the percentage: \"%s\"", buf);
	/* A buffer smaller than the terminal bounds the line too. */
	CHECK(status__format(buf, 10, &with, 200) <= 9, "small buffer");
	CHECK(strlen(buf) <= 9, "small buffer: \"%s\"", buf);
}

static void test_shorten(void)
{
	char buf[512], name[300];

	CHECK_STR(term__shorten(buf, sizeof(buf), "main", 100), "main");
	memset(name, 'a', 150);
	name[150] = '\0';
	term__shorten(buf, sizeof(buf), name, 100);
	CHECK_U64(strlen(buf), 100);
	CHECK(!strcmp(buf + 97, "..."), "ends with dots: \"%s\"", buf + 90);
	/* Exactly the limit: kept whole. */
	name[100] = '\0';
	CHECK_STR(term__shorten(buf, sizeof(buf), name, 100), name);
	/* UTF-8: counted in characters, never cut inside one. */
	CHECK_STR(term__shorten(buf, sizeof(buf), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4),
		  "\xc3\xa9...");
	CHECK_STR(term__shorten(buf, sizeof(buf), "\xc3\xa9\xc3\xa9\xc3\xa9", 3),
		  "\xc3\xa9\xc3\xa9\xc3\xa9");
	/* A small buffer: cut on a character boundary. */
	CHECK_STR(term__shorten(buf, 6, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4),
		  "\xc3\xa9...");
	CHECK_STR(term__shorten(buf, 5, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4), "...");
}

/* Disabled (not a TTY, or --quiet): nothing is ever written. */
static void test_disabled(void)
{
	struct status *st = status__new(false);
	struct status_numbers n = {.elapsed_s = 1};

	CHECK(st != NULL, "status__new");
	status__update(st, &n, 1);
	status__clear(st);
	status__delete(st);
	status__delete(NULL);
}

int main(void)
{
	test_with_duration();
	test_no_duration();
	test_widths();
	test_shorten();
	test_disabled();
	return check_summary("test_status");
}
