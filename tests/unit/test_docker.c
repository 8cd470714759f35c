// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for src/process/docker.c: container names from config.v2.json fixtures under
 * tests/fixtures/docker/containers/<id>/ (a normal one as Docker writes it, one cut in the
 * middle, one without a Name), and hostile cases made under /tmp: path traversal, symlinks,
 * FIFOs, oversized files, odd names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "process/docker.h"

#define ROOT "tests/fixtures/docker"
#define ID_WEB "f31f384749f9115acf01fcf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbb"
#define ID_BROKEN "7214fd1ba1e08804ddaf0ff991d1712fc6eefeeff04e1cf7f751f6077073c787"
#define ID_NONAME "74d1ea150147193214fe78335625de01f44391f5deb3bcbbc15b54bcd5c0c979"
#define ID_MISSING "0000000000000000000000000000000000000000000000000000000000000000"

static char scratch[64];

static void test_fixtures(void)
{
	char name[256];
	int rc;

	rc = docker__container_name(ROOT, ID_WEB, name, sizeof(name));
	CHECK(rc == 0, "normal config: %d (run from the repository root)", rc);
	CHECK_STR(name, "shop-web-1");

	memset(name, 'x', sizeof(name));
	rc = docker__container_name(ROOT, ID_BROKEN, name, sizeof(name));
	CHECK(rc == -EINVAL, "a config cut in the middle: %d", rc);
	CHECK_STR(name, "");

	rc = docker__container_name(ROOT, ID_NONAME, name, sizeof(name));
	CHECK(rc == -ENOENT, "a config without Name: %d", rc);
	CHECK_STR(name, "");

	rc = docker__container_name(ROOT, ID_MISSING, name, sizeof(name));
	CHECK(rc == -ENOENT, "no such container: %d", rc);
	rc = docker__container_name("/nonexistent/docker", ID_WEB, name, sizeof(name));
	CHECK(rc == -ENOENT, "no such root: %d", rc);

	/* Upper-case hex is still hex; the directory just does not exist under that name. */
	rc = docker__container_name(
		ROOT, "F31F384749F9115ACF01FCF82F5A966B59DCC0A4CBD7C9740888C0BF32AA2BBB", name,
		sizeof(name));
	CHECK(rc == -ENOENT, "upper-case ID: %d", rc);

	/* The output buffer: exactly enough, one byte short. */
	rc = docker__container_name(ROOT, ID_WEB, name, sizeof("shop-web-1"));
	CHECK(rc == 0, "exact fit: %d", rc);
	CHECK_STR(name, "shop-web-1");
	memset(name, 'x', sizeof(name));
	rc = docker__container_name(ROOT, ID_WEB, name, sizeof("shop-web-1") - 1);
	CHECK(rc == -E2BIG, "one short: %d", rc);
	CHECK(name[0] == '\0', "out not cleared on -E2BIG");
}

static void test_arguments(void)
{
	static const char *const bad_ids[] = {
		"../../etc",
		"..",
		"",
		"f31f384749f9115acf01fcf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbb/../" ID_WEB,
		"f31f3847 ",
		"/etc/passwd",
		"f31f384749f9115acf01fcf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbbf31f384749f9115acf"
		"01f"
		"cf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbb0",
		"g000",
	};
	char name[64], root[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		memset(name, 'x', sizeof(name));
		CHECK(docker__container_name(ROOT, bad_ids[i], name, sizeof(name)) == -EINVAL,
		      "ID '%s' accepted", bad_ids[i]);
		CHECK(name[0] == '\0', "out not cleared for '%s'", bad_ids[i]);
	}
	CHECK(docker__container_name(NULL, ID_WEB, name, sizeof(name)) == -EINVAL, "NULL root");
	CHECK(docker__container_name("", ID_WEB, name, sizeof(name)) == -EINVAL, "empty root");
	CHECK(docker__container_name(ROOT, NULL, name, sizeof(name)) == -EINVAL, "NULL ID");
	CHECK(docker__container_name(ROOT, ID_WEB, NULL, 10) == -EINVAL, "NULL out");
	CHECK(docker__container_name(ROOT, ID_WEB, name, 0) == -EINVAL, "zero length");

	memset(root, 'a', sizeof(root) - 1);
	root[0] = '/';
	root[sizeof(root) - 1] = '\0';
	CHECK(docker__container_name(root, ID_WEB, name, sizeof(name)) == -ENAMETOOLONG,
	      "a root longer than PATH_MAX");
}

/* <scratch>/containers/<id>/config.v2.json with this content; returns its path. */
static const char *put_config(const char *id, const char *content, size_t len)
{
	static char path[512];
	char dir[384];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/containers", scratch);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/containers/%s", scratch, id);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/config.v2.json", dir);
	if (!content)
		return path;
	f = fopen(path, "wb");
	if (f) {
		fwrite(content, 1, len, f);
		fclose(f);
	}
	return path;
}

static int name_of(const char *id, char *out, size_t len)
{
	return docker__container_name(scratch, id, out, len);
}

static void test_hostile(void)
{
	char name[256], *big;
	const char *path;
	int rc;

	snprintf(scratch, sizeof(scratch), "/tmp/hostprof-docker.XXXXXX");
	if (!mkdtemp(scratch)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}

#define CONFIG(id, text) put_config(id, text, sizeof(text) - 1)
	CONFIG("a1", "{\"Name\":\"/web\"}");
	CHECK(name_of("a1", name, sizeof(name)) == 0 && !strcmp(name, "web"), "minimal: '%s'",
	      name);
	CONFIG("a2", "{\"Name\":\"plain\"}  \n");
	CHECK(name_of("a2", name, sizeof(name)) == 0 && !strcmp(name, "plain"),
	      "no slash, trailing blanks: '%s'", name);
	CONFIG("a3", "{\"Name\":\"/\"}");
	CHECK(name_of("a3", name, sizeof(name)) == -ENOENT, "a Name of just '/'");
	CONFIG("a4", "{\"Name\":\"\"}");
	CHECK(name_of("a4", name, sizeof(name)) == -ENOENT, "an empty Name");
	CONFIG("a5", "{\"Name\":42}");
	CHECK(name_of("a5", name, sizeof(name)) == -ENOENT, "a numeric Name");
	CONFIG("a6", "[\"Name\",\"/x\"]");
	CHECK(name_of("a6", name, sizeof(name)) == -EINVAL, "not an object");
	CONFIG("a7", "");
	CHECK(name_of("a7", name, sizeof(name)) == -EINVAL, "an empty file");
	CONFIG("a8", "{\"Name\":\"/web\"} {\"Name\":\"/other\"}");
	CHECK(name_of("a8", name, sizeof(name)) == -EINVAL, "trailing data");
	CONFIG("a9", "{\"Name\":\"/we\\nb\"}");
	CHECK(name_of("a9", name, sizeof(name)) == -EINVAL, "a control character in the name");
	CONFIG("aa", "{\"Name\":\"/we\\u0000b\"}");
	CHECK(name_of("aa", name, sizeof(name)) == -EINVAL, "a NUL in the name");
	CONFIG("ab", "{\"Name\":\"/caf\\u00e9\"}");
	CHECK(name_of("ab", name, sizeof(name)) == 0 && !strcmp(name, "caf\xc3\xa9"), "UTF-8: '%s'",
	      name);

	/* A directory, a FIFO and a symlink where the file should be. */
	path = put_config("b1", NULL, 0);
	mkdir(path, 0700);
	CHECK(name_of("b1", name, sizeof(name)) == -EINVAL, "a directory");
	path = put_config("b2", NULL, 0);
	if (mkfifo(path, 0600) == 0)
		CHECK(name_of("b2", name, sizeof(name)) == -EINVAL, "a FIFO (must not hang)");
	path = put_config("b3", NULL, 0);
	if (symlink("../a1/config.v2.json", path) == 0)
		CHECK(name_of("b3", name, sizeof(name)) == -EINVAL, "a symlink");

	/* Over the size bound, and just under it. */
	big = malloc(DOCKER_CONFIG_MAX_BYTES + 2);
	if (big) {
		size_t n = DOCKER_CONFIG_MAX_BYTES;

		memset(big, ' ', n + 1);
		memcpy(big, "{\"Name\":\"/big\"}", 15);
		put_config("c1", big, n);
		rc = name_of("c1", name, sizeof(name));
		CHECK(rc == 0 && !strcmp(name, "big"), "exactly the bound: %d", rc);
		put_config("c2", big, n + 1);
		rc = name_of("c2", name, sizeof(name));
		CHECK(rc == -EFBIG, "one byte over the bound: %d", rc);
		free(big);
	}

	/* Unreadable: -EACCES (unless we are root, who reads anything). */
	CONFIG("d1", "{\"Name\":\"/secret\"}");
	path = put_config("d1", NULL, 0);
	chmod(path, 0);
	rc = name_of("d1", name, sizeof(name));
	CHECK(geteuid() == 0 ? rc == 0 : rc == -EACCES, "unreadable: %d", rc);

	{
		char cmd[128];

		/* Our own scratch directory, made above with a fixed name pattern. */
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", scratch);
	}
}

/* The parser alone, on buffers that are not NUL-terminated. */
static void test_name_from_config(void)
{
	static const char text[] = "{\"Name\":\"/web\"}{garbage";
	char name[16];

	memset(name, 'x', sizeof(name));
	CHECK(docker__name_from_config(text, 15, name, sizeof(name)) == 0, "the first 15 bytes");
	CHECK_STR(name, "web");
	memset(name, 'x', sizeof(name));
	CHECK(docker__name_from_config(text, sizeof(text) - 1, name, sizeof(name)) == -EINVAL,
	      "the garbage after it");
	CHECK_STR(name, "");
	memset(name, 'x', sizeof(name));
	CHECK(docker__name_from_config(text, 15, name, 3) == -E2BIG, "a buffer too small");
	CHECK_STR(name, "");
	CHECK(docker__name_from_config(text, 0, name, sizeof(name)) == -EINVAL, "nothing");
}

int main(void)
{
	test_fixtures();
	test_arguments();
	test_hostile();
	test_name_from_config();
	return check_summary("test_docker");
}
