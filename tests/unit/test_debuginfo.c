// SPDX-License-Identifier: BSD-2-Clause
/*
 * Separate debug files: a stripped library (only .dynsym) gets its local and hidden functions, and
 * its file:line, from a debug file found by build-id under a debug root or by .gnu_debuglink beside
 * it, or fetched from a debuginfod server; a corrupt, truncated or foreign debug file is ignored.
 * The layouts and the expected lines (addr2line on the debug file, libfxdbg.so.dbglines) come from
 * tests/unit/fixtures.mk.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/safe_open.h"
#include "check.h"
#include "symbols/debuginfod_fetch.h"
#include "symbols/dso.h"
#include "fixture_paths.h"

#define MAX_EXPECTS 16

struct expect {
	char function[64];
	uint64_t addr;
	char file[PATH_MAX];
	int64_t line;
};

static struct expect expects[MAX_EXPECTS];
static size_t nr_expects;

/* Reads "function 0xaddr file:line" lines. */
static void read_expects(void)
{
	char line[2 * PATH_MAX];
	FILE *f = fopen(fx("libfxdbg.so.dbglines"), "r");

	CHECK(f != NULL, "%s missing: run make unit-fixtures", fx("libfxdbg.so.dbglines"));
	if (!f)
		return;
	while (nr_expects < MAX_EXPECTS && fgets(line, sizeof(line), f)) {
		struct expect *e = &expects[nr_expects];
		char *addr, *pos, *colon;

		line[strcspn(line, "\n")] = '\0';
		addr = strchr(line, ' ');
		if (!addr)
			continue;
		*addr++ = '\0';
		pos = strchr(addr, ' ');
		if (!pos)
			continue;
		*pos++ = '\0';
		colon = strrchr(pos, ':');
		if (!colon)
			continue;
		*colon = '\0';
		snprintf(e->function, sizeof(e->function), "%.63s", line);
		e->addr = strtoull(addr, NULL, 16);
		snprintf(e->file, sizeof(e->file), "%s", pos);
		e->line = strtoll(colon + 1, NULL, 10);
		nr_expects++;
	}
	fclose(f);
	CHECK(nr_expects >= 8, "only %zu expected lines", nr_expects);
}

static bool exported(const char *name)
{
	return !strcmp(name, "fx_lib_alpha") || !strcmp(name, "fx_lib_beta");
}

/* A fresh cache (so that nothing found before is reused) with this debug root, and one dso. */
static struct dso *load(struct dso_cache **c, const char *root, const char *binary)
{
	const char *path = fx(binary);
	struct stat st;
	struct dso *d;

	*c = dso_cache__new(4);
	CHECK(*c != NULL, "dso_cache__new: %s", strerror(errno));
	if (!*c)
		return NULL;
	CHECK_U64(dso_cache__set_debug_root(*c, root ? fx(root) : ""), 0);
	CHECK(stat(path, &st) == 0, "fixture %s missing: run make unit-fixtures", path);
	d = dso_cache__get(*c, st.st_dev, st.st_ino, path, path);
	CHECK(d && dso__readable(d), "%s: %s", path, d ? dso__error(d) : "NULL");
	return d && dso__readable(d) ? d : NULL;
}

/* Every function by name, and the lines addr2line gives. */
static void check_lines(const char *what, struct dso *d)
{
	for (size_t i = 0; d && i < nr_expects; i++) {
		const struct expect *e = &expects[i];
		struct dso_line lines[DSO_MAX_LINES];
		char file[2 * PATH_MAX + 1];
		struct dso_symbol sym;
		bool found = dso__find_symbol(d, e->addr, &sym);
		size_t n;

		CHECK(found && !strcmp(sym.name, e->function), "%s: 0x%" PRIx64 ": got %s, want %s",
		      what, e->addr, found ? sym.name : "nothing", e->function);
		n = dso__find_lines(d, e->addr, lines, DSO_MAX_LINES);
		CHECK(n >= 1, "%s: no lines for 0x%" PRIx64, what, e->addr);
		if (!n)
			continue;
		snprintf(file, sizeof(file), "%s%s%s",
			 lines[0].file && lines[0].file[0] != '/' && lines[0].comp_dir
				 ? lines[0].comp_dir
				 : "",
			 lines[0].file && lines[0].file[0] != '/' && lines[0].comp_dir ? "/" : "",
			 lines[0].file ? lines[0].file : "");
		CHECK_STR(file, e->file);
		CHECK_U64(lines[0].line, e->line);
		CHECK_STR(lines[n - 1].function, e->function);
	}
}

/* With its debug file: every function by name, and the lines addr2line gives. */
static void check_with_debug(const char *what, const char *root, const char *binary)
{
	struct dso_cache *c;
	struct dso *d = load(&c, root, binary);

	check_lines(what, d);
	dso_cache__delete(c);
}

/* Without a usable debug file: .dynsym names only, never a wrong one, and no lines. */
static void check_no_debug(const char *what, struct dso *d)
{
	for (size_t i = 0; d && i < nr_expects; i++) {
		const struct expect *e = &expects[i];
		struct dso_line lines[DSO_MAX_LINES];
		struct dso_symbol sym;
		bool found = dso__find_symbol(d, e->addr, &sym);

		if (exported(e->function))
			CHECK(found && !strcmp(sym.name, e->function),
			      "%s: 0x%" PRIx64 ": got %s, want %s", what, e->addr,
			      found ? sym.name : "nothing", e->function);
		else
			CHECK(!found, "%s: 0x%" PRIx64 " (%s, not in .dynsym) named %s", what,
			      e->addr, e->function, sym.name);
		CHECK_U64(dso__find_lines(d, e->addr, lines, DSO_MAX_LINES), 0);
	}
}

static void check_dynsym_only(const char *what, const char *root, const char *binary)
{
	struct dso_cache *c;
	struct dso *d = load(&c, root, binary);

	check_no_debug(what, d);
	dso_cache__delete(c);
}

static void test_setter(void)
{
	struct dso_cache *c = dso_cache__new(1);

	CHECK_U64(dso_cache__set_debug_root(NULL, "/x"), (uint64_t)-EINVAL);
	CHECK_U64(dso_cache__set_debug_root(c, "/x"), 0);
	CHECK_U64(dso_cache__set_debug_root(c, NULL), 0);
	dso_cache__delete(c);
}

/* ------------------------------------------------------------------------------------------ */
/*
 * debuginfod: a real server (the debuginfod package) on a loopback port serves the fixture's debug
 * file; the stripped library gets its functions and lines through the fetched file. A server that
 * is down or silent fails within bounds and is counted; a cached file of another build-id is
 * refused; without DEBUGINFOD_URLS nothing is fetched at all.
 */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A loopback socket listening on a port the kernel picked; the caller never accepts on it. */
static int listen_loopback(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		if (fd >= 0)
			close(fd);
		*port = 0;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* A loopback port that nothing listens on (any more). */
static int closed_port(void)
{
	int port, fd = listen_loopback(&port);

	if (fd >= 0)
		close(fd);
	return port;
}

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n = 0;
	bool ok = in >= 0 && out >= 0;

	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ok = false;
	return ok && n == 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static size_t discard(void *p, size_t size, size_t n, void *user)
{
	return size * n;
}

/* Polls the server until it serves the build-id's debuginfo (it scans its directory after it
 * starts). Plain libcurl: libdebuginfod would remember a 404 for ten minutes. */
static bool served(int port, const char *hex, long long timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	char url[256];
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/buildid/%s/debuginfo", port, hex);
	while (code != 200 && now_ms() < end) {
		CURL *h = curl_easy_init();
		struct timespec nap = {.tv_nsec = 100 * 1000 * 1000};

		if (!h)
			return false;
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
		if (curl_easy_perform(h) != CURLE_OK ||
		    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK)
			code = 0;
		curl_easy_cleanup(h);
		if (code != 200)
			nanosleep(&nap, NULL);
	}
	return code == 200;
}

/* debuginfod serving dir on port; its log in the scratch directory. */
static pid_t start_debuginfod(const char *dir, int port)
{
	char port_s[16], db[PATH_MAX], log[PATH_MAX];
	pid_t pid;

	snprintf(port_s, sizeof(port_s), "%d", port);
	snprintf(db, sizeof(db), "%s", tmp("debuginfod.sqlite"));
	snprintf(log, sizeof(log), "%s", tmp("debuginfod.log"));
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* A server with DEBUGINFOD_URLS forwards its misses there: it must have none. */
		unsetenv("DEBUGINFOD_URLS");
		/* -F: ELF files under dir; no rescans, no grooming, one scanning thread. */
		execlp("debuginfod", "debuginfod", "-F", "-p", port_s, "-d", db, "-t", "0", "-g",
		       "0", "-c", "1", dir, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void stop_server(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

static void set_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static bool read_build_id(const char *name, char *hex, size_t len, uint8_t *id, size_t *id_len)
{
	FILE *f = fopen(fx(name), "r");
	bool ok = f && fgets(hex, (int)len, f);

	if (f)
		fclose(f);
	if (!ok)
		return false;
	hex[strcspn(hex, "\n")] = '\0';
	*id_len = strlen(hex) / 2;
	for (size_t i = 0; i < *id_len; i++)
		sscanf(hex + 2 * i, "%2hhx", &id[i]);
	return *id_len > 0;
}

static struct dso *get_stripped(struct dso_cache *c)
{
	const char *path = fx("libfxdbg-stripped.so");
	struct stat st;

	if (stat(path, &st))
		return NULL;
	return dso_cache__get(c, st.st_dev, st.st_ino, path, path);
}

/* A cache searching no local debug root, asking f. */
static struct dso_cache *fetching_cache(struct debuginfod_fetch *f)
{
	struct dso_cache *c = dso_cache__new(4);

	CHECK(c != NULL, "dso_cache__new: %s", strerror(errno));
	if (c) {
		dso_cache__set_debug_root(c, "");
		dso_cache__set_fetcher(c, f);
	}
	return c;
}

static struct debuginfod_fetch *fetcher(const char *cache_dir, double timeout_s)
{
	struct debuginfod_fetch_opts o = {
		.cache_dir = cache_dir, .timeout_s = timeout_s, .max_entries = 16};
	struct debuginfod_fetch *f = debuginfod_fetch__new(&o);

	CHECK(f != NULL, "debuginfod_fetch__new: %s", strerror(errno));
	return f;
}

/* Unset or blank DEBUGINFOD_URLS: no fetcher, no cache directory, no environment change. */
static void test_not_configured(void)
{
	const char *const values[] = {NULL, "", "  \t"};
	struct debuginfod_fetch_opts o = {
		.cache_dir = tmp("cache-off"), .timeout_s = 10, .max_entries = 16};
	struct dso_cache *c = dso_cache__new(4);
	struct dso *d;

	for (size_t i = 0; i < 3; i++) {
		set_env("DEBUGINFOD_URLS", values[i]);
		CHECK(!debuginfod_fetch__configured(), "configured with DEBUGINFOD_URLS '%s'",
		      values[i] ? values[i] : "(unset)");
		errno = 0;
		CHECK(debuginfod_fetch__new(&o) == NULL && errno == ENOENT,
		      "a fetcher without servers (%s)", strerror(errno));
	}
	CHECK(file_size(tmp("cache-off")) < 0, "the cache directory was made without servers");
	CHECK(getenv("DEBUGINFOD_CACHE_PATH") == NULL, "DEBUGINFOD_CACHE_PATH set without servers");
	/* No fetcher: the stripped library is what it is, and nothing is pending. */
	dso_cache__set_debug_root(c, "");
	d = get_stripped(c);
	CHECK(d && !dso__debug_pending(d), "pending without a fetcher");
	check_no_debug("no debuginfod", d);
	dso_cache__delete(c);
}

static void test_timeout_setting(void)
{
	set_env("DEBUGINFOD_TIMEOUT", NULL);
	CHECK(debuginfod_fetch__timeout_s(0) == DEBUGINFOD_FETCH_DEFAULT_TIMEOUT_S, "default");
	CHECK(debuginfod_fetch__timeout_s(2.5) == 2.5, "configured");
	set_env("DEBUGINFOD_TIMEOUT", "3");
	CHECK(debuginfod_fetch__timeout_s(0) == 3, "DEBUGINFOD_TIMEOUT");
	CHECK(debuginfod_fetch__timeout_s(7) == 7, "configured beats DEBUGINFOD_TIMEOUT");
	set_env("DEBUGINFOD_TIMEOUT", "soon");
	CHECK(debuginfod_fetch__timeout_s(0) == DEBUGINFOD_FETCH_DEFAULT_TIMEOUT_S, "bad value");
	set_env("DEBUGINFOD_TIMEOUT", NULL);
}

/* The server has the debug file: pending, then adopted with its lines, kept in the cache. */
static void test_fetched(int port, const char *hex)
{
	char url[64], cached[PATH_MAX], path[PATH_MAX];
	uint8_t other[64];
	size_t other_len;
	char other_hex[160];
	struct debuginfod_fetch_stats st;
	struct debuginfod_fetch *f;
	struct dso_cache *c;
	struct dso *d;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	set_env("DEBUGINFOD_URLS", url);
	set_env("DEBUGINFOD_CACHE_PATH", NULL);
	f = fetcher(tmp("cache"), 10);
	c = fetching_cache(f);
	if (!f || !c)
		goto out;
	/* hostprof's cache directory holds libdebuginfod's. */
	CHECK_STR(getenv("DEBUGINFOD_CACHE_PATH"), tmp("cache/debuginfod"));
	d = get_stripped(c);
	CHECK(d && dso__debug_pending(d), "the stripped library is not waiting for its file");
	/* Until the next dso_cache__get() nothing changes under the caller. */
	check_no_debug("pending", d);
	CHECK_U64(debuginfod_fetch__wait(f, 20ULL * 1000000000), 0);
	d = get_stripped(c);
	CHECK(d && !dso__debug_pending(d), "still pending after the fetch");
	check_lines("debuginfod", d);
	debuginfod_fetch__stats(f, &st);
	CHECK(st.ok == 1 && st.failed == 0 && st.pending == 0,
	      "ok %" PRIu64 " failed %" PRIu64 " pending %" PRIu64, st.ok, st.failed, st.pending);
	snprintf(cached, sizeof(cached), "%s/%s/debuginfo", tmp("cache/debuginfod"), hex);
	CHECK(file_size(cached) == file_size(fx("debuglink/libfxdbg.so.debug")),
	      "%s is not the served debug file", cached);

	/* A build-id that the server does not have: one failure, remembered, not retried. */
	if (read_build_id("fx_pie.buildid", other_hex, sizeof(other_hex), other, &other_len)) {
		CHECK_U64(debuginfod_fetch__get(f, other, other_len, "fx_pie", path, sizeof(path)),
			  DEBUGINFOD_PENDING);
		CHECK_U64(debuginfod_fetch__wait(f, 20ULL * 1000000000), 0);
		for (int i = 0; i < 2; i++)
			CHECK_U64(debuginfod_fetch__get(f, other, other_len, "fx_pie", path,
							sizeof(path)),
				  DEBUGINFOD_FAILED);
		debuginfod_fetch__stats(f, &st);
		CHECK(st.failed == 1 && st.failures[DEBUGINFOD_NOT_FOUND] == 1 && st.pending == 0,
		      "not found: failed %" PRIu64 ", not_found %" PRIu64, st.failed,
		      st.failures[DEBUGINFOD_NOT_FOUND]);
		debuginfod_fetch__warn_new_failures(f);
	}
out:
	dso_cache__delete(c);
	debuginfod_fetch__delete(f);
}

/*
 * One fetch of the stripped library's debug file from url (cache in cache_path) that must fail
 * with `why`: nothing adopted, one failure of that kind counted. Returns how long it took (ms).
 */
static long long expect_failure(const char *what, const char *url, const char *cache_path,
				double timeout_s, enum debuginfod_failure why)
{
	struct debuginfod_fetch_stats st;
	struct debuginfod_fetch *f;
	struct dso_cache *c;
	struct dso *d;
	long long ms = -1;

	set_env("DEBUGINFOD_URLS", url);
	set_env("DEBUGINFOD_CACHE_PATH", cache_path);
	f = fetcher(NULL, timeout_s);
	c = fetching_cache(f);
	if (f && c) {
		ms = now_ms();
		d = get_stripped(c);
		CHECK(d && dso__debug_pending(d), "%s: not pending", what);
		CHECK_U64(debuginfod_fetch__wait(f, 20ULL * 1000000000), 0);
		d = get_stripped(c);
		ms = now_ms() - ms;
		CHECK(d && !dso__debug_pending(d), "%s: still pending", what);
		check_no_debug(what, d);
		debuginfod_fetch__stats(f, &st);
		CHECK(st.ok == 0 && st.failed == 1 && st.failures[why] == 1,
		      "%s: ok %" PRIu64 " failed %" PRIu64 " %s %" PRIu64, what, st.ok, st.failed,
		      debuginfod_fetch__failure_name(why), st.failures[why]);
		debuginfod_fetch__warn_new_failures(f);
	}
	dso_cache__delete(c);
	debuginfod_fetch__delete(f);
	return ms;
}

/* Refused at once; a server that takes the connection and never answers, at the timeout. */
static void test_server_down(void)
{
	char url[64];
	long long ms;
	int port, fd;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
	ms = expect_failure("server down", url, tmp("cache-down"), 10, DEBUGINFOD_UNREACHABLE);
	CHECK(ms < 5000, "a refused connection took %lld ms", ms);

	fd = listen_loopback(&port);
	CHECK(fd >= 0, "listen: %s", strerror(errno));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	ms = expect_failure("silent server", url, tmp("cache-silent"), 1.5, DEBUGINFOD_TIMEOUT);
	CHECK(ms >= 1400 && ms < 6000, "a 1.5 s timeout took %lld ms", ms);
	if (fd >= 0)
		close(fd);
}

/* Deleting the fetcher cancels the fetch under way (a silent server, a long timeout). */
static void test_shutdown(const uint8_t *id, size_t id_len)
{
	struct timespec nap = {.tv_nsec = 300 * 1000 * 1000};
	struct debuginfod_fetch *f;
	char url[64], path[PATH_MAX];
	int port, fd = listen_loopback(&port);
	long long ms;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	set_env("DEBUGINFOD_URLS", url);
	set_env("DEBUGINFOD_CACHE_PATH", tmp("cache-shutdown"));
	f = fetcher(NULL, 60);
	if (f)
		CHECK_U64(debuginfod_fetch__get(f, id, id_len, "shutdown", path, sizeof(path)),
			  DEBUGINFOD_PENDING);
	nanosleep(&nap, NULL);
	ms = now_ms();
	debuginfod_fetch__delete(f);
	ms = now_ms() - ms;
	CHECK(ms < 3000, "shutting down during a fetch took %lld ms", ms);
	if (fd >= 0)
		close(fd);
}

/* The file under the build-id is another binary's (fx_inline): refused, counted, no lines.
 * libdebuginfod reads its cache before any server: the closed port is never reached. */
static void test_rejected(const char *hex)
{
	char url[64], dir[PATH_MAX], file[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/%s", tmp("cache-bad"), hex);
	snprintf(file, sizeof(file), "%s/debuginfo", dir);
	CHECK(!mkdir(tmp("cache-bad"), 0700) && !mkdir(dir, 0700) &&
		      copy_file(fx("fx_inline"), file),
	      "cannot plant %s", file);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
	expect_failure("foreign file", url, tmp("cache-bad"), 10, DEBUGINFOD_REJECTED);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void test_debuginfod(void)
{
	uint8_t id[64];
	size_t id_len;
	char hex[160];
	pid_t server;
	int port;

	/* libcurl honours *_proxy variables: the servers are on loopback, never behind one. */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	test_not_configured();
	test_timeout_setting();

	if (!read_build_id("libfxdbg.so.buildid", hex, sizeof(hex), id, &id_len)) {
		CHECK(0, "%s missing: run make unit-fixtures", fx("libfxdbg.so.buildid"));
		return;
	}
	/* The server sees the debug file alone, never the stripped library. */
	CHECK(!mkdir(tmp("served"), 0700) &&
		      copy_file(fx("debuglink/libfxdbg.so.debug"), tmp("served/libfxdbg.so.debug")),
	      "cannot copy the debug file to %s", tmp("served"));
	port = closed_port();
	server = start_debuginfod(tmp("served"), port);
	CHECK(server > 0, "fork: %s", strerror(errno));
	if (served(port, hex, 30000))
		test_fetched(port, hex);
	else
		CHECK(0,
		      "debuginfod (package debuginfod: make deps) did not serve %s on port %d; "
		      "its log: %s",
		      hex, port, tmp("debuginfod.log"));
	stop_server(server);

	test_server_down();
	test_shutdown(id, id_len);
	test_rejected(hex);
	set_env("DEBUGINFOD_URLS", NULL);
	if (!check_failed)
		nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------------------------ */
/*
 * Hostile debug files: a FIFO at the .gnu_debuglink and build-id paths (an open(O_RDONLY) of it
 * blocked the capture loop for ever; the alarm turns a hang into a failure), and a debuglink
 * candidate too big to read through for its CRC: taken by its build-id, refused without one.
 */

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL test_debuginfo: blocked on a FIFO debug file\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static struct dso *load_abs(struct dso_cache **c, const char *root, const char *path)
{
	struct stat st;
	struct dso *d;

	*c = dso_cache__new(4);
	if (!*c || dso_cache__set_debug_root(*c, root) || stat(path, &st)) {
		CHECK(0, "setup: %s", path);
		return NULL;
	}
	alarm(20);
	d = dso_cache__get(*c, st.st_dev, st.st_ino, path, path);
	alarm(0);
	CHECK(d && dso__readable(d), "%s: %s", path, d ? dso__error(d) : "NULL");
	return d && dso__readable(d) ? d : NULL;
}

static void sh(const char *cmd)
{
	CHECK(system(cmd) == 0, "setup: %s", cmd);
}

static void test_hostile_debug_files(void)
{
	uint64_t before[SAFE_OPEN_REASON__COUNT], after[SAFE_OPEN_REASON__COUNT];
	char cmd[4 * PATH_MAX], hex[64], root[PATH_MAX];
	uint8_t id[20];
	size_t id_len;
	struct dso_cache *c;
	struct dso *d;

	signal(SIGALRM, on_alarm);
	/* A FIFO beside the binary, under the debuglink's name. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/ && mkfifo %s/libfxdbg.so.debug",
		 tmp("fifo"), fx("libfxdbg-stripped.so"), tmp("fifo"), tmp("fifo"));
	sh(cmd);
	d = load_abs(&c, "", tmp("fifo/libfxdbg-stripped.so"));
	check_no_debug("FIFO debuglink", d);
	dso_cache__delete(c);

	/* A FIFO at the build-id path. */
	CHECK(read_build_id("libfxdbg.so.buildid", hex, sizeof(hex), id, &id_len), "build-id");
	snprintf(root, sizeof(root), "%s", tmp("fifo-root"));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/.build-id/%.2s && mkfifo %s/.build-id/%.2s/%s.debug", root, hex, root,
		 hex, hex + 2);
	sh(cmd);
	d = load_abs(&c, root, fx("libfxdbg-stripped.so"));
	check_no_debug("FIFO build-id file", d);
	dso_cache__delete(c);

	/*
	 * The debug file grown (sparse) past SAFE_OPEN_MAX_CRC_BYTES: its CRC no longer matches,
	 * and it is not read through to find out. Its build-id is the binary's: taken.
	 */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && cp %s %s %s/ && truncate -s %llu %s/libfxdbg.so.debug", tmp("big"),
		 fx("debuglink/libfxdbg-stripped.so"), fx("debuglink/libfxdbg.so.debug"),
		 tmp("big"), (unsigned long long)SAFE_OPEN_MAX_CRC_BYTES + 1, tmp("big"));
	sh(cmd);
	safe_open__stats(before);
	d = load_abs(&c, "", tmp("big/libfxdbg-stripped.so"));
	check_lines("big debuglink with the build-id", d);
	dso_cache__delete(c);

	/* Without its build-id note nothing vouches for it: refused, counted. */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && cp %s %s/ && objcopy --remove-section .note.gnu.build-id %s "
		 "%s/libfxdbg.so.debug && truncate -s %llu %s/libfxdbg.so.debug",
		 tmp("big-noid"), fx("debuglink/libfxdbg-stripped.so"), tmp("big-noid"),
		 fx("debuglink/libfxdbg.so.debug"), tmp("big-noid"),
		 (unsigned long long)SAFE_OPEN_MAX_CRC_BYTES + 1, tmp("big-noid"));
	sh(cmd);
	d = load_abs(&c, "", tmp("big-noid/libfxdbg-stripped.so"));
	check_no_debug("big debuglink without a build-id", d);
	dso_cache__delete(c);
	safe_open__stats(after);
	CHECK_U64(after[SAFE_OPEN_CRC_SKIPPED] - before[SAFE_OPEN_CRC_SKIPPED], 1);
}

int main(void)
{
	if (fixture_paths__init("test_debuginfo")) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return check_summary("test_debuginfo");
	}
	read_expects();
	test_setter();
	/* The unstripped library: its own tables, the reference for the rest. */
	check_with_debug("unstripped", NULL, "libfxdbg.so");
	/* No debug root, no debug file beside it: what a stripped library gives today. */
	check_dynsym_only("stripped alone", "debugroot-none", "libfxdbg-stripped.so");
	check_with_debug("build-id", "debugroot-buildid", "libfxdbg-stripped.so");
	check_with_debug("debuglink", "debugroot-none", "debuglink/libfxdbg-stripped.so");
	/* Renamed bytes in the debug file: its CRC differs, so "fx_lib_HIDDEN" never shows. */
	check_dynsym_only("corrupt debuglink", "debugroot-none",
			  "debuglink-corrupt/libfxdbg-stripped.so");
	check_dynsym_only("truncated build-id", "debugroot-truncated", "libfxdbg-stripped.so");
	check_dynsym_only("foreign build-id", "debugroot-mismatch", "libfxdbg-stripped.so");
	test_hostile_debug_files();
	test_debuginfod();
	return check_summary("test_debuginfo");
}
