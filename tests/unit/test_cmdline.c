// SPDX-License-Identifier: BSD-2-Clause
/*
 * process.command_line as exported (process/cmdline.h): off, full, and redacted on argv with its
 * boundaries, each secret form the README names, things that must stay, and truncation.
 */
#include <string.h>

#include "check.h"
#include "process/cmdline.h"

#define R CMDLINE_REDACTED_TEXT

/* argv given as a C literal with embedded NULs; sizeof counts the literal's own last NUL. */
#define FORMAT(lit, mode) cmdline__format(lit, sizeof(lit) - 1, mode, out, sizeof(out))

static char out[4096];

static void test_modes(void)
{
	static const char argv[] = "/usr/bin/app\0--token=abc123\0serve\0";

	CHECK(FORMAT(argv, CMDLINE_OFF) == NULL, "off exports nothing");
	CHECK_STR(FORMAT(argv, CMDLINE_FULL), "/usr/bin/app --token=abc123 serve");
	CHECK_STR(FORMAT(argv, CMDLINE_REDACTED), "/usr/bin/app --token=" R " serve");
	CHECK(cmdline__format(NULL, 0, CMDLINE_FULL, out, sizeof(out)) == NULL, "unknown");
	CHECK(cmdline__format(argv, sizeof(argv) - 1, CMDLINE_FULL, out, 0) == NULL, "size 0");
	/* The last NUL may be missing (trailing NULs stripped). */
	CHECK_STR(cmdline__format("a\0b", 3, CMDLINE_FULL, out, sizeof(out)), "a b");
}

static void test_redacted(void)
{
	static const struct {
		const char *argv;
		size_t len;
		const char *want;
	} cases[] = {
#define C(lit, want) {lit, sizeof(lit) - 1, want}
		C("app\0--password\0my secret\0--port\0"
		  "80\0",
		  "app --password " R " --port 80"),
		C("app\0-secret\0hunter2\0", "app -secret " R),
		/* -password starts like -pVALUE: both its name and its value go. */
		C("app\0-password\0hunter2\0", "app -p" R " " R),
		C("app\0--api-key=k1\0--Secret-File=/x\0", "app --api-key=" R " --Secret-File=" R),
		C("app\0--AUTH_TOKEN\0t\0--verbose\0", "app --AUTH_TOKEN " R " --verbose"),
		C("env\0DB_PASSWORD=pw\0AWS_ACCESS_KEY_ID=id\0HOME=/root\0prog\0",
		  "env DB_PASSWORD=" R " AWS_ACCESS_KEY_ID=" R " HOME=/root prog"),
		C("mysql\0-p\0pw\0-u\0root\0", "mysql -p " R " -u root"),
		C("mysql\0-ppw\0-p=pw2\0", "mysql -p" R " -p=" R),
		C("psql\0postgres://user:pw@db:5432/x?a=b\0",
		  "psql postgres://user:" R "@db:5432/x?a=b"),
		C("curl\0https://host/path@x:y\0", "curl https://host/path@x:y"),
		C("curl\0https://user@host/\0", "curl https://user@host/"),
		/* argv[0] is kept as it is, whatever it looks like. */
		C("--token=x\0a\0", "--token=x a"),
		/* A flag that takes no value: the next argument after it is hidden all the same
		 * (cautious); plain arguments are not flags. */
		C("app\0token\0--x\0", "app token --x"),
		C("app\0--token\0", "app --token"),
		C("app\0--credentials-file\0/etc/c\0", "app --credentials-file " R),
#undef C
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(cmdline__format(cases[i].argv, cases[i].len, CMDLINE_REDACTED, out,
					  sizeof(out)),
			  cases[i].want);
}

static void test_truncated(void)
{
	char small[12];

	CHECK_STR(cmdline__format("app\0--token=abcdef\0", 19, CMDLINE_REDACTED, small,
				  sizeof(small)),
		  "app --token");
	CHECK_STR(cmdline__format("abcdefghijklmnop", 16, CMDLINE_FULL, small, sizeof(small)),
		  "abcdefghijk");
}

int main(void)
{
	test_modes();
	test_redacted();
	test_truncated();
	return check_summary("test_cmdline");
}
