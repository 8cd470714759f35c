// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP encoder, checked four ways: `protoc --decode` against our .proto files (names and
 * shape), `protoc --decode_raw` (field numbers, without trusting our .proto files), protobuf-c
 * unpack (every number exact), and Python's json module on the OTLP/JSON form (valid JSON, the
 * OTLP/JSON conventions, and the same content as the binary form).
 *
 * protoc reads the schemas from proto/ under the working directory, the repository root or the
 * copy of it that tests/run-unit.sh runs in.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "formats/encode.h"
#include "model/profile.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;

#define NR(a) (sizeof(a) / sizeof((a)[0]))

#define PERIOD 10000000LL /* 100 Hz */
#define CPU_TIME 1700000000123456789ULL
#define OFF_CPU_TIME 1700000000223456789ULL
#define DURATION 5000000000ULL
#define OFF_CPU_VALUE 123456789LL
#define BUILD_ID "b1d0c0ffee0123456789abcdef0123456789abcd"
#define HTLHASH "0123456789abcdef0123456789abcdef"
#define HTLHASH2 "fedcba9876543210fedcba9876543210"
#define CONTAINER_ID "3f1c2b9a8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
#define UNKNOWN_LABEL "[unknown] libfoo.so+0x1234"
#define KERNEL_ADDR 0xffffffff81000100ULL
#define SCOPE_VERSION "1.2.3-test"
#define U_FFFD "\xef\xbf\xbd"
/* A quote, a backslash, a newline, a control character, a stray byte, a valid two-byte sequence
 * and a truncated three-byte one; and what OTLP carries instead: each byte that starts no valid
 * sequence is one U+FFFD. */
#define WEIRD_NAME "we\"ird\\na\nme\x01\xff caf\xc3\xa9 \xe2\x82!"
#define WEIRD_CLEAN "we\"ird\\na\nme\x01" U_FFFD " caf\xc3\xa9 " U_FFFD U_FFFD "!"
/* The same, as a Python literal. */
#define WEIRD_PY "'we\"ird\\\\na\\nme\\x01\\ufffd caf\\xe9 \\ufffd\\ufffd!'"
#define PROTO_FILE "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
#define REQUEST_TYPE                                                                               \
	"opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"

static char tmpdir[] = "/tmp/hostprof-test-otlp-XXXXXX";

static const struct otlp_opts opts = {
	.host_name = "testhost",
	.host_arch = "amd64",
	.scope_version = SCOPE_VERSION,
};

/* --- the hand-built profiles --- */

static const struct {
	const char *name, *file;
} functions[] = {
	{"main", "app.c"},     {"work", "app.c"},	{"compute", "app.c"},
	{"do_syscall_64", ""}, {WEIRD_NAME, "weird.c"},
};

/* Model locations of the cpu profile; the off-cpu profile reuses 1 and 2 in another order. */
static const struct {
	uint32_t mapping;
	uint64_t address;
	uint32_t function; /* 0: unresolved, named by UNKNOWN_LABEL */
	enum frame_kind kind;
} locations[] = {
	{1, 0x1100, 1, FRAME_NATIVE},	   {1, 0x1200, 2, FRAME_NATIVE},
	{1, 0x1300, 3, FRAME_NATIVE},	   {2, 0x1234, 0, FRAME_NATIVE},
	{0, KERNEL_ADDR, 4, FRAME_KERNEL}, {1, 0x1400, 5, FRAME_NATIVE},
};

/* What each location name must decode to: mapping file ("" = none), address, frame type. */
static const struct {
	const char *name, *mapping;
	uint64_t address;
	const char *frame_type;
} want_locations[] = {
	{"main", "/usr/bin/app", 0x1100, "native"},
	{"work", "/usr/bin/app", 0x1200, "native"},
	{"compute", "/usr/bin/app", 0x1300, "native"},
	{UNKNOWN_LABEL, "/nonexistent/libfoo.so", 0x1234, "native"},
	{"do_syscall_64", "", KERNEL_ADDR, "kernel"},
	{WEIRD_CLEAN, "/usr/bin/app", 0x1400, "native"},
};

/* Stacks are leaf first, as in the model and in OTLP. */
static const uint32_t stack1[] = {3, 2, 1}; /* main -> work -> compute */
static const uint32_t stack2[] = {5, 4, 2, 1};
static const uint32_t stack4[] = {6, 2, 1};
static const uint32_t stack5[] = {5};

static const struct {
	const uint32_t *stack;
	size_t depth;
	uint32_t pid, tid;
	const char *comm, *thread_name;
	int64_t count;
} samples[] = {
	{stack1, 3, 100, 100, "app", "app", 3},
	{stack1, 3, 100, 101, "app", "worker", 4},
	{stack2, 4, 200, 200, "other", "other", 5},
	{stack4, 3, 100, 101, "app", "worker", 2},
	/* No process entry and no thread name: a kernel thread. */
	{stack5, 1, 300, 300, "kworker/1:2", "", 1},
	/* Differs from the first only in comm (an exec within the window): one OTLP sample. */
	{stack1, 3, 100, 100, "app-old", "app", 1},
};

static const struct profile_desc cpu_desc = {
	.sample_type = "cpu",
	.sample_unit = "nanoseconds",
	.period_type = "cpu",
	.period_unit = "nanoseconds",
	.period = PERIOD,
	.time_nanos = CPU_TIME,
	.duration_nanos = DURATION,
};

static const struct profile_desc off_cpu_desc = {
	.sample_type = "off_cpu",
	.sample_unit = "nanoseconds",
	.time_nanos = OFF_CPU_TIME,
	.duration_nanos = DURATION,
};

static uint32_t str(struct profile *p, const char *s)
{
	int64_t idx = profile__string(p, s);

	CHECK(idx >= 0, "string \"%s\": %lld", s, (long long)idx);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static struct profile_mapping app_mapping(struct profile *p)
{
	struct profile_mapping m = {0x555555554000, 0x555555580000, 0, 0, 0, 0, true};

	m.filename = str(p, "/usr/bin/app");
	m.build_id = str(p, BUILD_ID);
	m.htlhash = str(p, HTLHASH);
	return m;
}

static void set_process(struct profile *p, uint32_t pid, const char *service, const char *exe,
			const char *path, const char *cmdline, const char *container)
{
	struct profile_process proc = {.pid = pid};

	proc.service_name = str(p, service);
	proc.exe_name = str(p, exe);
	proc.exe_path = str(p, path);
	proc.command_line = str(p, cmdline);
	proc.container_id = str(p, container);
	CHECK(profile__set_process(p, &proc) == 0, "set_process %u", pid);
}

static struct profile *build_cpu(void)
{
	struct profile *p = profile__new(&cpu_desc);
	struct profile_mapping m1, m2 = {0x7f0000000000, 0x7f0000100000, 0x1000, 0, 0, 0, false};

	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return NULL;
	m1 = app_mapping(p);
	m2.filename = str(p, "/nonexistent/libfoo.so");
	m2.htlhash = str(p, HTLHASH2);
	CHECK_U64(profile__mapping(p, &m1), 1);
	CHECK_U64(profile__mapping(p, &m2), 2);
	for (size_t i = 0; i < NR(functions); i++) {
		struct profile_function f = {.name = str(p, functions[i].name)};

		f.system_name = f.name;
		f.filename = str(p, functions[i].file);
		CHECK_U64(profile__function(p, &f), i + 1);
	}
	for (size_t i = 0; i < NR(locations); i++) {
		struct profile_location l = {
			.mapping = locations[i].mapping,
			.address = locations[i].address,
			.function = locations[i].function,
			.kind = locations[i].kind,
		};

		if (!l.function)
			l.label = str(p, UNKNOWN_LABEL);
		CHECK_U64(profile__location(p, &l), i + 1);
	}
	set_process(p, 100, "app-svc", "app", "/usr/bin/app", "/usr/bin/app --serve", CONTAINER_ID);
	/* A command line that is not UTF-8 must not break the request. */
	set_process(p, 200, "other", "other", "/opt/other/bin/other", "other -x \xff", "");
	for (size_t i = 0; i < NR(samples); i++) {
		struct profile_labels lb = {.pid = samples[i].pid, .tid = samples[i].tid};
		int64_t idx = profile__stack(p, samples[i].stack, samples[i].depth);

		lb.comm = str(p, samples[i].comm);
		lb.thread_name = str(p, samples[i].thread_name);
		CHECK(idx > 0, "stack: %lld", (long long)idx);
		CHECK(profile__add_sample(p, (uint32_t)idx, &lb, samples[i].count * PERIOD,
					  samples[i].count) == 0,
		      "add");
	}
	return p;
}

/* Interned in another order than the cpu profile, so its model indices all differ: the
 * dictionary must still hold each function, location and mapping once. */
static struct profile *build_off_cpu(void)
{
	struct profile *p = profile__new(&off_cpu_desc);
	struct profile_function work = {0}, main_f = {0};
	struct profile_location lw = {0}, lm = {0};
	struct profile_labels lb = {.pid = 100, .tid = 101};
	struct profile_mapping m1;
	uint32_t stack[2];
	int64_t idx;

	CHECK(p != NULL, "profile__new: %s", strerror(errno));
	if (!p)
		return NULL;
	str(p, "unused string");
	work.name = work.system_name = str(p, "work");
	work.filename = str(p, "app.c");
	main_f.name = main_f.system_name = str(p, "main");
	main_f.filename = work.filename;
	m1 = app_mapping(p);
	lw.mapping = lm.mapping = (uint32_t)profile__mapping(p, &m1);
	lw.function = (uint32_t)profile__function(p, &work);
	lm.function = (uint32_t)profile__function(p, &main_f);
	lw.address = 0x1200;
	lm.address = 0x1100;
	stack[0] = (uint32_t)profile__location(p, &lw);
	stack[1] = (uint32_t)profile__location(p, &lm);
	set_process(p, 100, "app-svc", "app", "/usr/bin/app", "/usr/bin/app --serve", CONTAINER_ID);
	idx = profile__stack(p, stack, 2);
	CHECK(idx > 0, "stack");
	lb.comm = str(p, "app");
	lb.thread_name = str(p, "worker");
	CHECK(profile__add_sample(p, (uint32_t)idx, &lb, OFF_CPU_VALUE, 2) == 0, "add");
	return p;
}

/* --- running tools --- */

static char *find_tool(const char *name, const char *fallback)
{
	char line[4096] = "", *cmd = NULL;
	FILE *f;

	if (asprintf(&cmd, "command -v %s 2>/dev/null", name) < 0)
		return NULL;
	f = popen(cmd, "r");
	free(cmd);
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		pclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	/* As 'nobody' the first one in PATH may be a shim under /root that cannot run. */
	if (line[0] && access(line, X_OK) == 0)
		return strdup(line);
	if (access(fallback, X_OK) == 0)
		return strdup(fallback);
	return NULL;
}

/* Runs cmd (a shell command) and returns its stdout, or NULL (its stderr is then shown). */
static char *run(size_t *out_len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *run(size_t *out_len, const char *fmt, ...)
{
	char *cmd = NULL, *full = NULL, *out = NULL, *errfile = NULL, buf[4096];
	size_t size = 0, n;
	FILE *f, *mem;
	va_list ap;
	int status, len;

	va_start(ap, fmt);
	len = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (len < 0)
		return NULL;
	if (asprintf(&errfile, "%s/cmd.stderr", tmpdir) < 0 ||
	    asprintf(&full, "%s 2>'%s'", cmd, errfile) < 0) {
		free(cmd);
		free(errfile);
		return NULL;
	}
	mem = open_memstream(&out, &size);
	f = popen(full, "r");
	if (f && mem) {
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
	}
	status = f ? pclose(f) : -1;
	if (mem)
		fclose(mem);
	CHECK(status == 0 && out, "`%s` failed with status %d", cmd, status);
	if (status != 0 || !out) {
		f = fopen(errfile, "r");
		while (f && fgets(buf, sizeof(buf), f))
			fprintf(stderr, "  | %s", buf);
		if (f)
			fclose(f);
		free(out);
		out = NULL;
	}
	if (out_len)
		*out_len = out ? size : 0;
	unlink(errfile);
	free(errfile);
	free(full);
	free(cmd);
	return out;
}

static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len)
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	uint8_t *b = NULL, *tmp;

	if (!f)
		return -errno;
	do {
		cap *= 2;
		tmp = realloc(b, cap);
		if (!tmp) {
			free(b);
			fclose(f);
			return -ENOMEM;
		}
		b = tmp;
		n += fread(b + n, 1, cap - n, f);
	} while (n == cap);
	fclose(f);
	*buf = b;
	*len = n;
	return 0;
}

/* Splits text into lines with their indentation stripped; the text is modified. */
static size_t split_lines(char *text, char ***out)
{
	size_t n = 0, cap = 0;
	char **lines = NULL, *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			char **tmp = realloc(lines, (cap = cap ? cap * 2 : 256) * sizeof(*lines));

			if (!tmp)
				break;
			lines = tmp;
		}
		lines[n++] = l + strspn(l, " ");
	}
	*out = lines;
	return n;
}

/* --- 1. protoc --decode: names and shape, against our .proto files --- */

struct text_dict {
	char **lines;
	size_t nr;
	char **strs; /* string_table entries as protoc prints them, without the quotes */
	size_t nr_strs;
};

static const char *text_str(const struct text_dict *t, const char *idx_line, const char *prefix)
{
	unsigned long idx;

	if (strncmp(idx_line, prefix, strlen(prefix)) != 0)
		return "(none)";
	idx = strtoul(idx_line + strlen(prefix), NULL, 10);
	return idx < t->nr_strs ? t->strs[idx] : "(bad index)";
}

/* Whether the lines from `from` on start with the given ones. */
static bool lines_at(const struct text_dict *t, size_t from, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (from + i >= t->nr || strcmp(t->lines[from + i], want[i]) != 0)
			return false;
	}
	return true;
}

static bool lines_anywhere(const struct text_dict *t, const char *const *want, size_t n)
{
	for (size_t i = 0; i < t->nr; i++) {
		if (lines_at(t, i, want, n))
			return true;
	}
	return false;
}

static size_t first_line(const struct text_dict *t, const char *line)
{
	for (size_t i = 0; i < t->nr; i++) {
		if (strcmp(t->lines[i], line) == 0)
			return i;
	}
	return t->nr;
}

/* "key=value" of every attribute_table entry, the key resolved through the string table. */
static void text_attrs(const struct text_dict *t, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i + 3 < t->nr && off < size; i++) {
		const char *v;

		if (strcmp(t->lines[i], "attribute_table {") != 0 ||
		    strcmp(t->lines[i + 2], "value {") != 0)
			continue;
		v = t->lines[i + 3];
		if (strncmp(v, "string_value: ", 14) == 0)
			v += 14;
		else if (strncmp(v, "int_value: ", 11) == 0)
			v += 11;
		off += snprintf(buf + off, size - off, "[%s=%s]",
				text_str(t, t->lines[i + 1], "key_strindex: "), v);
	}
}

/* (type/unit) of every block named `block`, in order. */
static void text_value_types(const struct text_dict *t, const char *block, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i + 2 < t->nr && off < size; i++) {
		if (strcmp(t->lines[i], block) != 0)
			continue;
		off += snprintf(buf + off, size - off, "[%s/%s]",
				text_str(t, t->lines[i + 1], "type_strindex: "),
				text_str(t, t->lines[i + 2], "unit_strindex: "));
	}
}

static void check_zero_entry(const struct text_dict *t, const char *table)
{
	char open[64];
	size_t i;

	snprintf(open, sizeof(open), "%s {", table);
	i = first_line(t, open);
	CHECK(i + 1 < t->nr && strcmp(t->lines[i + 1], "}") == 0,
	      "protoc --decode: the first %s entry is not empty", table);
}

static void check_protoc_text(const char *protoc, const char *file)
{
	/* Each attribute is an `attributes { key, value { ... } }` block. */
	static const char *const resource100[] = {
		"key: \"service.name\"",
		"value {",
		"string_value: \"app-svc\"",
		"}",
		"}",
		"attributes {",
		"key: \"process.pid\"",
		"value {",
		"int_value: 100",
		"}",
		"}",
		"attributes {",
		"key: \"process.executable.name\"",
		"value {",
		"string_value: \"app\"",
		"}",
	};
	static const char *const container[] = {
		"key: \"container.id\"",
		"value {",
		"string_value: \"" CONTAINER_ID "\"",
		"}",
	};
	static const char *const host[] = {
		"key: \"host.name\"",
		"value {",
		"string_value: \"testhost\"",
		"}",
		"}",
		"attributes {",
		"key: \"host.arch\"",
		"value {",
		"string_value: \"amd64\"",
		"}",
		"}",
		"attributes {",
		"key: \"os.type\"",
		"value {",
		"string_value: \"linux\"",
		"}",
	};
	static const char *const cmdline[] = {
		"key: \"process.command_line\"",
		"value {",
		"string_value: \"other -x \\357\\277\\275\"",
		"}",
	};
	static const char *const kworker[] = {
		"key: \"service.name\"",
		"value {",
		"string_value: \"kworker/1:2\"",
		"}",
		"}",
		"attributes {",
		"key: \"process.pid\"",
		"value {",
		"int_value: 300",
		"}",
		"}",
		"attributes {",
		"key: \"host.name\"",
	};
	static const char *const scope[] = {
		"scope {",
		"name: \"hostprof\"",
		"version: \"" SCOPE_VERSION "\"",
		"}",
	};
	static const char *const link0[] = {
		"link_table {",
		"trace_id: "
		"\"\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000"
		"\\000\"",
		"span_id: \"\\000\\000\\000\\000\\000\\000\\000\\000\"",
		"}",
	};
	static const char *const want_attrs[] = {
		"[thread.name=\"app\"]",
		"[thread.name=\"worker\"]",
		"[thread.name=\"other\"]",
		"[thread.id=100]",
		"[thread.id=101]",
		"[thread.id=200]",
		"[thread.id=300]",
		"[profile.frame.type=\"native\"]",
		"[profile.frame.type=\"kernel\"]",
		"[process.executable.build_id.gnu=\"" BUILD_ID "\"]",
		"[process.executable.build_id.htlhash=\"" HTLHASH "\"]",
		"[process.executable.build_id.htlhash=\"" HTLHASH2 "\"]",
	};
	struct text_dict t = {0};
	char *out =
		run(NULL, "'%s' --decode=" REQUEST_TYPE " --proto_path=proto " PROTO_FILE " < '%s'",
		    protoc, file);
	char buf[4096];
	size_t i;

	if (!out)
		return;
	t.nr = split_lines(out, &t.lines);
	t.strs = calloc(t.nr + 1, sizeof(*t.strs));
	for (i = 0; t.strs && i < t.nr; i++) {
		char *l = t.lines[i];
		size_t len = strlen(l);

		if (strncmp(l, "string_table: \"", 15) == 0 && len >= 16)
			t.strs[t.nr_strs++] = strndup(l + 15, len - 16);
	}

	/* All seven zero entries, each first in its table. */
	i = first_line(&t, "dictionary {");
	CHECK(i + 2 < t.nr && strcmp(t.lines[i + 1], "mapping_table {") == 0 &&
		      strcmp(t.lines[i + 2], "}") == 0,
	      "protoc --decode: the dictionary does not start with an empty mapping");
	check_zero_entry(&t, "location_table");
	check_zero_entry(&t, "function_table");
	check_zero_entry(&t, "attribute_table");
	check_zero_entry(&t, "stack_table");
	CHECK(lines_at(&t, first_line(&t, "link_table {"), link0, NR(link0)),
	      "protoc --decode: link_table[0] is not 16 + 8 zero bytes");
	CHECK(t.nr_strs > 0 && strcmp(t.strs[0], "") == 0, "protoc --decode: string_table[0]");

	text_value_types(&t, "sample_type {", buf, sizeof(buf));
	CHECK_STR(buf, "[cpu/nanoseconds][off_cpu/nanoseconds][cpu/nanoseconds][cpu/nanoseconds]");
	text_value_types(&t, "period_type {", buf, sizeof(buf));
	CHECK_STR(buf, "[cpu/nanoseconds][cpu/nanoseconds][cpu/nanoseconds]");

	CHECK(lines_anywhere(&t, resource100, NR(resource100)), "resource of pid 100");
	CHECK(lines_anywhere(&t, container, NR(container)), "container.id");
	CHECK(lines_anywhere(&t, host, NR(host)), "host.name, host.arch, os.type");
	CHECK(lines_anywhere(&t, cmdline, NR(cmdline)), "command line with U+FFFD");
	CHECK(lines_anywhere(&t, kworker, NR(kworker)),
	      "pid 300 (no process entry): service.name from comm, then pid, then host");
	CHECK(lines_anywhere(&t, scope, NR(scope)), "scope");

	text_attrs(&t, buf, sizeof(buf));
	for (i = 0; i < NR(want_attrs); i++)
		CHECK(strstr(buf, want_attrs[i]) != NULL, "attribute_table lacks %s: %s",
		      want_attrs[i], buf);

	for (i = 0; i < t.nr_strs; i++)
		free(t.strs[i]);
	free(t.strs);
	free(t.lines);
	free(out);
}

/* --- 2. protoc --decode_raw: field numbers, without our schema --- */

struct raw_node {
	unsigned field;
	const char *value; /* NULL for a message */
	struct raw_node *kids;
	size_t nr_kids;
};

static void raw_free(struct raw_node *n)
{
	for (size_t i = 0; i < n->nr_kids; i++)
		raw_free(&n->kids[i]);
	free(n->kids);
}

/* "N {" opens a message, "}" closes it, "N: value" is a scalar (or an unparsable string). */
static bool raw_parse(char **lines, size_t nr, size_t *i, struct raw_node *parent, int depth)
{
	while (*i < nr) {
		char *l = lines[(*i)++], *end;
		struct raw_node *kid, *tmp;
		unsigned long field;

		if (strcmp(l, "}") == 0)
			return depth > 0;
		field = strtoul(l, &end, 10);
		if (end == l || (strcmp(end, " {") != 0 && strncmp(end, ": ", 2) != 0))
			return false;
		tmp = realloc(parent->kids, (parent->nr_kids + 1) * sizeof(*tmp));
		if (!tmp)
			return false;
		parent->kids = tmp;
		kid = &parent->kids[parent->nr_kids++];
		*kid = (struct raw_node){.field = (unsigned)field};
		if (end[0] == ':') {
			kid->value = end + 2;
		} else if (!raw_parse(lines, nr, i, kid, depth + 1)) {
			return false;
		}
	}
	return depth == 0;
}

static const struct raw_node *raw_kid(const struct raw_node *n, unsigned field, size_t nth)
{
	for (size_t i = 0; n && i < n->nr_kids; i++) {
		if (n->kids[i].field == field && nth-- == 0)
			return &n->kids[i];
	}
	return NULL;
}

/* Bit f set when field f occurs. */
static uint64_t raw_fields(const struct raw_node *n)
{
	uint64_t mask = 0;

	for (size_t i = 0; n && i < n->nr_kids; i++)
		mask |= n->kids[i].field < 64 ? 1ULL << n->kids[i].field : 1;
	return mask;
}

#define F(n) (1ULL << (n))

static void check_protoc_raw(const char *protoc, const char *file)
{
	struct raw_node root = {0};
	const struct raw_node *dict, *rp, *prof, *n;
	char *out = run(NULL, "'%s' --decode_raw < '%s'", protoc, file);
	char **lines = NULL, want_time[32];
	size_t nr, i = 0;
	bool found;

	if (!out)
		return;
	nr = split_lines(out, &lines);
	CHECK(raw_parse(lines, nr, &i, &root, 0), "cannot parse protoc --decode_raw output");

	CHECK_U64(raw_fields(&root), F(1) | F(2));
	dict = raw_kid(&root, 2, 0);
	CHECK(dict && !dict->value, "request field 2 (dictionary) is not a message");
	CHECK_U64(raw_fields(dict), F(1) | F(2) | F(3) | F(4) | F(5) | F(6) | F(7));
	CHECK(!raw_kid(&root, 2, 1), "more than one dictionary");
	/* Zero entries: empty messages, the empty string, and the link's zero ids. */
	for (unsigned f = 1; f <= 7; f++) {
		n = raw_kid(dict, f, 0);
		if (f == 5)
			CHECK(n && n->value && strcmp(n->value, "\"\"") == 0, "string_table[0]");
		else if (f == 4)
			CHECK(n && raw_fields(n) == (F(1) | F(2)), "link_table[0]");
		else /* decode_raw shows an empty message as an empty string */
			CHECK(n && n->value && strcmp(n->value, "\"\"") == 0,
			      "dictionary field %u: [0] not empty", f);
	}

	/* resource_profiles[0]: resource (1), scope_profiles (2) -> scope (1), profiles (2). */
	rp = raw_kid(&root, 1, 0);
	CHECK(rp && raw_fields(rp) == (F(1) | F(2)), "ResourceProfiles fields");
	n = raw_kid(raw_kid(rp, 2, 0), 1, 0);
	CHECK(n && n->nr_kids == 2 && raw_kid(n, 1, 0) && raw_kid(n, 2, 0),
	      "InstrumentationScope name (1) and version (2)");
	prof = raw_kid(raw_kid(rp, 2, 0), 2, 0);
	CHECK(prof != NULL, "no Profile at 1.2.2");
	CHECK_U64(raw_fields(prof), F(1) | F(2) | F(3) | F(4) | F(5) | F(6));
	/* decode_raw prints fixed64 in hex and varints in decimal: this tells 3 from 4. */
	snprintf(want_time, sizeof(want_time), "0x%016llx", (unsigned long long)CPU_TIME);
	n = raw_kid(prof, 3, 0);
	CHECK(n && n->value && strcmp(n->value, want_time) == 0, "time_unix_nano (fixed64): %s",
	      n && n->value ? n->value : "(none)");
	n = raw_kid(prof, 4, 0);
	CHECK(n && n->value && strtoull(n->value, NULL, 10) == DURATION, "duration_nano");
	n = raw_kid(prof, 6, 0);
	CHECK(n && n->value && strtoll(n->value, NULL, 10) == PERIOD, "period");
	n = raw_kid(prof, 1, 0);
	CHECK(n && raw_fields(n) == (F(1) | F(2)), "sample_type: ValueType fields 1, 2");
	n = raw_kid(prof, 2, 0);
	CHECK(n && raw_fields(n) == (F(1) | F(2) | F(4)), "Sample fields 1, 2, 4");
	n = n ? raw_kid(n, 1, 0) : NULL;
	CHECK(n && n->value && strtol(n->value, NULL, 10) > 0, "Sample stack_index (1)");

	n = raw_kid(dict, 7, 1);
	CHECK(n && raw_fields(n) == F(1), "Stack field 1");
	/* Some location has a mapping, an address, a line and attributes. */
	found = false;
	for (size_t k = 1; (n = raw_kid(dict, 2, k)); k++)
		found |= raw_fields(n) == (F(1) | F(2) | F(3) | F(4));
	CHECK(found, "no Location with fields 1, 2, 3 and 4");
	n = raw_kid(dict, 1, 1);
	CHECK(n && raw_fields(n) == (F(1) | F(2) | F(4) | F(5)), "Mapping fields 1, 2, 4, 5");

	raw_free(&root);
	free(lines);
	free(out);
}

/* --- 3. protobuf-c: every number --- */

/* The generated names do not fit a line. */
static pb_request *unpack_request(size_t len, const uint8_t *buf)
{
	return opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
}

static void free_request(pb_request *req)
{
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		req, NULL);
}

static const char *S(const pb_request *req, int64_t idx)
{
	const pb_dictionary *d = req->dictionary;

	if (!d || idx < 0 || (size_t)idx >= d->n_string_table)
		return "(bad string index)";
	return d->string_table[idx];
}

static void print_any(FILE *f, const pb_any_value *v)
{
	if (!v)
		fputs("(no value)", f);
	else if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
		fputs(v->string_value, f);
	else if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
		fprintf(f, "%" PRId64, v->int_value);
	else
		fprintf(f, "(value case %d)", (int)v->value_case);
}

static void print_attr(FILE *f, const pb_request *req, int32_t idx)
{
	const pb_dictionary *d = req->dictionary;

	if (idx < 0 || (size_t)idx >= d->n_attribute_table) {
		fputs("(bad attribute index)", f);
		return;
	}
	fprintf(f, "%s=", S(req, d->attribute_table[idx]->key_strindex));
	print_any(f, d->attribute_table[idx]->value);
}

static void print_value_type(FILE *f, const pb_request *req, const pb_value_type *vt)
{
	if (vt)
		fprintf(f, "%s/%s", S(req, vt->type_strindex), S(req, vt->unit_strindex));
	else
		fputc('/', f);
}

/*
 * The request as text: dictionary sizes, then every resource, scope, profile and sample with
 * each index resolved; with `tables`, also every mapping and location. The Python check below
 * prints the JSON form the same way, so the two must be byte-identical.
 */
static char *digest(const pb_request *req, bool tables)
{
	const pb_dictionary *d = req->dictionary;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fprintf(f, "D %zu %zu %zu %zu %zu %zu %zu\n", d->n_mapping_table, d->n_location_table,
		d->n_function_table, d->n_link_table, d->n_string_table, d->n_attribute_table,
		d->n_stack_table);
	for (size_t i = 0; tables && i < d->n_mapping_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Mapping *m =
			d->mapping_table[i];

		fprintf(f, "M %" PRIu64 " %" PRIu64 " %" PRIu64 " %s |", m->memory_start,
			m->memory_limit, m->file_offset, S(req, m->filename_strindex));
		for (size_t k = 0; k < m->n_attribute_indices; k++) {
			fputc(' ', f);
			print_attr(f, req, m->attribute_indices[k]);
		}
		fputc('\n', f);
	}
	for (size_t i = 0; tables && i < d->n_location_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Location *l =
			d->location_table[i];

		fprintf(f, "L %d %" PRIu64 " |", l->mapping_index, l->address);
		for (size_t k = 0; k < l->n_lines; k++) {
			int32_t fi = l->lines[k]->function_index;

			if (fi < 0 || (size_t)fi >= d->n_function_table)
				fprintf(f, " (bad function index)");
			else
				fprintf(f, " %s@%s", S(req, d->function_table[fi]->name_strindex),
					S(req, d->function_table[fi]->filename_strindex));
		}
		fputs(" |", f);
		for (size_t k = 0; k < l->n_attribute_indices; k++) {
			fputc(' ', f);
			print_attr(f, req, l->attribute_indices[k]);
		}
		fputc('\n', f);
	}
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
			req->resource_profiles[r];

		fputs("R\n", f);
		for (size_t a = 0; rp->resource && a < rp->resource->n_attributes; a++) {
			fprintf(f, "A %s=", rp->resource->attributes[a]->key);
			print_any(f, rp->resource->attributes[a]->value);
			fputc('\n', f);
		}
		for (size_t s = 0; s < rp->n_scope_profiles; s++) {
			const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp =
				rp->scope_profiles[s];

			fprintf(f, "C %s %s\n", sp->scope ? sp->scope->name : "(none)",
				sp->scope ? sp->scope->version : "(none)");
			for (size_t p = 0; p < sp->n_profiles; p++) {
				const Opentelemetry__Proto__Profiles__V1development__Profile *pr =
					sp->profiles[p];

				fputs("P ", f);
				print_value_type(f, req, pr->sample_type);
				fputc(' ', f);
				print_value_type(f, req, pr->period_type);
				fprintf(f, " %" PRId64 " %" PRIu64 " %" PRIu64 "\n", pr->period,
					pr->time_unix_nano, pr->duration_nano);
				for (size_t k = 0; k < pr->n_samples; k++) {
					const Opentelemetry__Proto__Profiles__V1development__Sample
						*sm = pr->samples[k];
					const Opentelemetry__Proto__Profiles__V1development__Stack
						*st = NULL;

					if (sm->stack_index >= 0 &&
					    (size_t)sm->stack_index < d->n_stack_table)
						st = d->stack_table[sm->stack_index];
					fputs("S ", f);
					for (size_t j = 0; st && j < st->n_location_indices; j++) {
						int32_t li = st->location_indices[j];
						const Opentelemetry__Proto__Profiles__V1development__Location
							*l = NULL;

						if (li >= 0 && (size_t)li < d->n_location_table)
							l = d->location_table[li];
						if (j)
							fputc(';', f);
						for (size_t q = 0; l && q < l->n_lines; q++) {
							int32_t fi = l->lines[q]->function_index;

							if (q)
								fputc('+', f);
							if (fi >= 0 &&
							    (size_t)fi < d->n_function_table)
								fputs(S(req,
									d->function_table[fi]
										->name_strindex),
								      f);
						}
					}
					fputs(" |", f);
					for (size_t j = 0; j < sm->n_attribute_indices; j++) {
						fputc(' ', f);
						print_attr(f, req, sm->attribute_indices[j]);
					}
					fputs(" |", f);
					for (size_t j = 0; j < sm->n_values; j++)
						fprintf(f, "%s%" PRId64, j ? "," : " ",
							sm->values[j]);
					fputc('\n', f);
				}
			}
		}
	}
	fclose(f);
	return buf;
}

#define RESOURCE_100                                                                               \
	"R\n"                                                                                      \
	"A service.name=app-svc\n"                                                                 \
	"A process.pid=100\n"                                                                      \
	"A process.executable.name=app\n"                                                          \
	"A process.executable.path=/usr/bin/app\n"                                                 \
	"A process.command_line=/usr/bin/app --serve\n"                                            \
	"A host.name=testhost\n"                                                                   \
	"A host.arch=amd64\n"                                                                      \
	"A os.type=linux\n"                                                                        \
	"A container.id=" CONTAINER_ID "\n"                                                        \
	"C hostprof " SCOPE_VERSION "\n"
#define RESOURCE_200                                                                               \
	"R\n"                                                                                      \
	"A service.name=other\n"                                                                   \
	"A process.pid=200\n"                                                                      \
	"A process.executable.name=other\n"                                                        \
	"A process.executable.path=/opt/other/bin/other\n"                                         \
	"A process.command_line=other -x " U_FFFD "\n"                                             \
	"A host.name=testhost\n"                                                                   \
	"A host.arch=amd64\n"                                                                      \
	"A os.type=linux\n"                                                                        \
	"C hostprof " SCOPE_VERSION "\n"
#define RESOURCE_300                                                                               \
	"R\n"                                                                                      \
	"A service.name=kworker/1:2\n"                                                             \
	"A process.pid=300\n"                                                                      \
	"A host.name=testhost\n"                                                                   \
	"A host.arch=amd64\n"                                                                      \
	"A os.type=linux\n"                                                                        \
	"C hostprof " SCOPE_VERSION "\n"
#define CPU_TIMES " 10000000 1700000000123456789 5000000000\n"
#define OFF_CPU_PROFILE                                                                            \
	"P off_cpu/nanoseconds / 0 1700000000223456789 5000000000\n"                               \
	"S work;main | thread.name=worker thread.id=101 | 123456789\n"

/* 3 mappings, 7 locations (the off-cpu profile's two are the cpu profile's), 7 functions (5 and
 * the unknown frame's), the zero link, 19 strings, 13 attributes, 6 stacks. */
static const char want_digest[] =
	"D 3 7 7 1 19 13 6\n" RESOURCE_100 "P cpu/nanoseconds cpu/nanoseconds" CPU_TIMES
	"S compute;work;main | thread.name=app thread.id=100 | 40000000\n"
	"S compute;work;main | thread.name=worker thread.id=101 | 40000000\n"
	"S " WEIRD_CLEAN
	";work;main | thread.name=worker thread.id=101 | 20000000\n" OFF_CPU_PROFILE RESOURCE_200
	"P cpu/nanoseconds cpu/nanoseconds" CPU_TIMES "S do_syscall_64;" UNKNOWN_LABEL
	";work;main | thread.name=other thread.id=200 | 50000000\n" RESOURCE_300
	"P cpu/nanoseconds cpu/nanoseconds" CPU_TIMES
	"S do_syscall_64 | thread.id=300 | 10000000\n";

/* samples_count: the cpu profile counts samples; off-cpu keeps its unit. "samples", "count". */
static const char want_digest_counts[] =
	"D 3 7 7 1 21 13 6\n" RESOURCE_100 "P samples/count cpu/nanoseconds" CPU_TIMES
	"S compute;work;main | thread.name=app thread.id=100 | 4\n"
	"S compute;work;main | thread.name=worker thread.id=101 | 4\n"
	"S " WEIRD_CLEAN
	";work;main | thread.name=worker thread.id=101 | 2\n" OFF_CPU_PROFILE RESOURCE_200
	"P samples/count cpu/nanoseconds" CPU_TIMES "S do_syscall_64;" UNKNOWN_LABEL
	";work;main | thread.name=other thread.id=200 | 5\n" RESOURCE_300
	"P samples/count cpu/nanoseconds" CPU_TIMES "S do_syscall_64 | thread.id=300 | 1\n";

static const char *attr_value_str(const pb_request *req, int32_t idx, const char *key)
{
	const pb_dictionary *d = req->dictionary;
	const pb_any_value *v;

	if (idx <= 0 || (size_t)idx >= d->n_attribute_table ||
	    strcmp(S(req, d->attribute_table[idx]->key_strindex), key) != 0)
		return NULL;
	v = d->attribute_table[idx]->value;
	if (!v || v->value_case != OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
		return NULL;
	return v->string_value;
}

/* Every table entry is distinct and every entry past 0 is referenced from somewhere. */
static void check_dedup_and_orphans(const pb_request *req)
{
	const pb_dictionary *d = req->dictionary;
	bool *str_used = calloc(d->n_string_table + 1, sizeof(bool));
	bool *attr_used = calloc(d->n_attribute_table + 1, sizeof(bool));
	bool *loc_used = calloc(d->n_location_table + 1, sizeof(bool));
	bool *func_used = calloc(d->n_function_table + 1, sizeof(bool));
	bool *map_used = calloc(d->n_mapping_table + 1, sizeof(bool));
	bool *stack_used = calloc(d->n_stack_table + 1, sizeof(bool));
	size_t unused = 0, dups = 0;

#define USE(arr, n, idx)                                                                           \
	do {                                                                                       \
		if ((idx) >= 0 && (size_t)(idx) < (n))                                             \
			arr[idx] = true;                                                           \
		else                                                                               \
			CHECK(false, "index %d out of range %zu", (int)(idx), (size_t)(n));        \
	} while (0)

	if (!str_used || !attr_used || !loc_used || !func_used || !map_used || !stack_used) {
		CHECK(false, "calloc");
		goto out;
	}
	for (size_t i = 0; i < d->n_string_table; i++) {
		for (size_t j = i + 1; j < d->n_string_table; j++)
			dups += strcmp(d->string_table[i], d->string_table[j]) == 0;
	}
	for (size_t i = 0; i < d->n_function_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Function *f =
			d->function_table[i];

		USE(str_used, d->n_string_table, f->name_strindex);
		USE(str_used, d->n_string_table, f->system_name_strindex);
		USE(str_used, d->n_string_table, f->filename_strindex);
		for (size_t j = i + 1; j < d->n_function_table; j++)
			dups += f->name_strindex == d->function_table[j]->name_strindex;
	}
	for (size_t i = 0; i < d->n_mapping_table; i++) {
		USE(str_used, d->n_string_table, d->mapping_table[i]->filename_strindex);
		for (size_t k = 0; k < d->mapping_table[i]->n_attribute_indices; k++)
			USE(attr_used, d->n_attribute_table,
			    d->mapping_table[i]->attribute_indices[k]);
	}
	for (size_t i = 0; i < d->n_location_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Location *l =
			d->location_table[i];

		USE(map_used, d->n_mapping_table, l->mapping_index);
		for (size_t k = 0; k < l->n_lines; k++)
			USE(func_used, d->n_function_table, l->lines[k]->function_index);
		for (size_t k = 0; k < l->n_attribute_indices; k++)
			USE(attr_used, d->n_attribute_table, l->attribute_indices[k]);
		for (size_t j = i + 1; j < d->n_location_table; j++)
			dups += l->mapping_index == d->location_table[j]->mapping_index &&
				l->address == d->location_table[j]->address;
	}
	for (size_t i = 0; i < d->n_attribute_table; i++)
		USE(str_used, d->n_string_table, d->attribute_table[i]->key_strindex);
	for (size_t i = 0; i < d->n_stack_table; i++) {
		for (size_t k = 0; k < d->stack_table[i]->n_location_indices; k++)
			USE(loc_used, d->n_location_table, d->stack_table[i]->location_indices[k]);
	}
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp =
			req->resource_profiles[r]->scope_profiles[0];

		for (size_t p = 0; p < sp->n_profiles; p++) {
			const Opentelemetry__Proto__Profiles__V1development__Profile *pr =
				sp->profiles[p];

			USE(str_used, d->n_string_table, pr->sample_type->type_strindex);
			USE(str_used, d->n_string_table, pr->sample_type->unit_strindex);
			if (pr->period_type) {
				USE(str_used, d->n_string_table, pr->period_type->type_strindex);
				USE(str_used, d->n_string_table, pr->period_type->unit_strindex);
			}
			for (size_t k = 0; k < pr->n_samples; k++) {
				USE(stack_used, d->n_stack_table, pr->samples[k]->stack_index);
				for (size_t j = 0; j < pr->samples[k]->n_attribute_indices; j++)
					USE(attr_used, d->n_attribute_table,
					    pr->samples[k]->attribute_indices[j]);
			}
		}
	}
	for (size_t i = 1; i < d->n_string_table; i++)
		unused += !str_used[i];
	for (size_t i = 1; i < d->n_attribute_table; i++)
		unused += !attr_used[i];
	for (size_t i = 1; i < d->n_location_table; i++)
		unused += !loc_used[i];
	for (size_t i = 1; i < d->n_function_table; i++)
		unused += !func_used[i];
	for (size_t i = 1; i < d->n_mapping_table; i++)
		unused += !map_used[i];
	for (size_t i = 1; i < d->n_stack_table; i++)
		unused += !stack_used[i];
	CHECK(dups == 0, "%zu duplicate dictionary entries", dups);
	CHECK(unused == 0, "%zu dictionary entries nothing refers to", unused);
out:
	free(str_used);
	free(attr_used);
	free(loc_used);
	free(func_used);
	free(map_used);
	free(stack_used);
#undef USE
}

static void check_unpacked(const uint8_t *buf, size_t len, const char *want)
{
	pb_request *req = unpack_request(len, buf);
	const pb_dictionary *d;
	char *got;

	CHECK(req != NULL, "protobuf-c cannot unpack the request");
	if (!req)
		return;
	d = req->dictionary;
	CHECK(d != NULL, "no dictionary");
	if (!d)
		goto out;

	got = digest(req, false);
	CHECK(got && strcmp(got, want) == 0, "request differs:\n--- got\n%s--- want\n%s",
	      got ? got : "(null)", want);
	free(got);

	/* The zero entries, exactly. */
	CHECK(d->n_mapping_table && d->mapping_table[0]->memory_start == 0 &&
		      d->mapping_table[0]->memory_limit == 0 &&
		      d->mapping_table[0]->filename_strindex == 0 &&
		      d->mapping_table[0]->n_attribute_indices == 0,
	      "mapping_table[0]");
	CHECK(d->n_location_table && d->location_table[0]->mapping_index == 0 &&
		      d->location_table[0]->address == 0 && d->location_table[0]->n_lines == 0 &&
		      d->location_table[0]->n_attribute_indices == 0,
	      "location_table[0]");
	CHECK(d->n_function_table && d->function_table[0]->name_strindex == 0 &&
		      d->function_table[0]->system_name_strindex == 0 &&
		      d->function_table[0]->filename_strindex == 0,
	      "function_table[0]");
	CHECK(d->n_link_table == 1 && d->link_table[0]->trace_id.len == 16 &&
		      d->link_table[0]->span_id.len == 8 &&
		      memcmp(d->link_table[0]->trace_id.data, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
			     16) == 0 &&
		      memcmp(d->link_table[0]->span_id.data, "\0\0\0\0\0\0\0\0", 8) == 0,
	      "link_table[0]");
	CHECK(d->n_string_table && strcmp(d->string_table[0], "") == 0, "string_table[0]");
	CHECK(d->n_attribute_table && d->attribute_table[0]->key_strindex == 0 &&
		      d->attribute_table[0]->value == NULL,
	      "attribute_table[0]");
	CHECK(d->n_stack_table && d->stack_table[0]->n_location_indices == 0, "stack_table[0]");

	/* Each location once, with its mapping, address, one line and frame type. */
	CHECK_U64(d->n_location_table, NR(want_locations) + 1);
	for (size_t w = 0; w < NR(want_locations); w++) {
		size_t hits = 0;

		for (size_t i = 1; i < d->n_location_table; i++) {
			const Opentelemetry__Proto__Profiles__V1development__Location *l =
				d->location_table[i];
			const char *mapping = "", *type;
			int32_t fi;

			if (l->n_lines != 1)
				continue;
			fi = l->lines[0]->function_index;
			if (fi <= 0 || (size_t)fi >= d->n_function_table ||
			    strcmp(S(req, d->function_table[fi]->name_strindex),
				   want_locations[w].name) != 0)
				continue;
			hits++;
			if (l->mapping_index > 0 && (size_t)l->mapping_index < d->n_mapping_table)
				mapping = S(req,
					    d->mapping_table[l->mapping_index]->filename_strindex);
			CHECK_STR(mapping, want_locations[w].mapping);
			CHECK_U64(l->address, want_locations[w].address);
			type = l->n_attribute_indices == 1
				       ? attr_value_str(req, l->attribute_indices[0],
							"profile.frame.type")
				       : NULL;
			CHECK_STR(type, want_locations[w].frame_type);
		}
		CHECK(hits == 1, "location \"%s\" found %zu times", want_locations[w].name, hits);
	}
	/* Unresolved frames are named by their label; the model's system name stays. */
	for (size_t i = 1; i < d->n_function_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Function *f =
			d->function_table[i];

		CHECK(f->name_strindex > 0, "function %zu has no name", i);
		CHECK(f->system_name_strindex == f->name_strindex, "function %zu system name", i);
		if (strcmp(S(req, f->name_strindex), "main") == 0)
			CHECK_STR(S(req, f->filename_strindex), "app.c");
		if (strcmp(S(req, f->name_strindex), UNKNOWN_LABEL) == 0)
			CHECK_U64(f->filename_strindex, 0);
	}

	/* The mappings, their build-id attributes present exactly when the model has them. */
	CHECK_U64(d->n_mapping_table, 3);
	for (size_t i = 1; i < d->n_mapping_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Mapping *m =
			d->mapping_table[i];
		const char *file = S(req, m->filename_strindex);

		if (strcmp(file, "/usr/bin/app") == 0) {
			CHECK_U64(m->memory_start, 0x555555554000);
			CHECK_U64(m->memory_limit, 0x555555580000);
			CHECK_U64(m->file_offset, 0);
			CHECK_U64(m->n_attribute_indices, 2);
			if (m->n_attribute_indices == 2) {
				CHECK_STR(attr_value_str(req, m->attribute_indices[0],
							 "process.executable.build_id.gnu"),
					  BUILD_ID);
				CHECK_STR(attr_value_str(req, m->attribute_indices[1],
							 "process.executable.build_id.htlhash"),
					  HTLHASH);
			}
		} else {
			CHECK_STR(file, "/nonexistent/libfoo.so");
			CHECK_U64(m->memory_start, 0x7f0000000000);
			CHECK_U64(m->memory_limit, 0x7f0000100000);
			CHECK_U64(m->file_offset, 0x1000);
			CHECK_U64(m->n_attribute_indices, 1);
			if (m->n_attribute_indices == 1)
				CHECK_STR(attr_value_str(req, m->attribute_indices[0],
							 "process.executable.build_id.htlhash"),
					  HTLHASH2);
		}
	}
	check_dedup_and_orphans(req);
out:
	free_request(req);
}

/* --- 4. OTLP/JSON, read by Python --- */

static const char json_check_py[] =
	"import json, re, sys\n"
	"raw = sys.stdin.buffer.read()\n"
	"doc = json.loads(raw.decode('utf-8'))  # strict: invalid UTF-8 or JSON raises\n"
	"times = set(sys.argv[1:])\n"
	"I64 = {'timeUnixNano', 'durationNano', 'period', 'values', 'memoryStart', 'memoryLimit',\n"
	"       'fileOffset', 'address', 'intValue', 'line', 'column', 'startLine',\n"
	"       'timestampsUnixNano'}\n"
	"I32 = {'stackIndex', 'typeStrindex', 'unitStrindex', 'keyStrindex', 'mappingIndex',\n"
	"       'functionIndex', 'nameStrindex', 'systemNameStrindex', 'filenameStrindex',\n"
	"       'locationIndices', 'attributeIndices', 'linkIndex', 'droppedAttributesCount'}\n"
	"errors = []\n"
	"def walk(x, path):\n"
	"    if isinstance(x, dict):\n"
	"        for k, v in x.items():\n"
	"            if not re.fullmatch(r'[a-z][A-Za-z0-9]*', k):\n"
	"                errors.append('key %r at %s is not lowerCamelCase' % (k, path))\n"
	"            for e in (v if isinstance(v, list) else [v]):\n"
	"                if k in I64 and not (isinstance(e, str) and re.fullmatch(r'-?[0-9]+', "
	"e)):\n"
	"                    errors.append('%s.%s: 64-bit %r is not a decimal string' % (path, k, "
	"e))\n"
	"                if k in I32 and type(e) is not int:\n"
	"                    errors.append('%s.%s: %r is not a number' % (path, k, e))\n"
	"            walk(v, path + '.' + k)\n"
	"    elif isinstance(x, list):\n"
	"        for i, e in enumerate(x):\n"
	"            walk(e, '%s[%d]' % (path, i))\n"
	"walk(doc, '')\n"
	"d = doc['dictionary']\n"
	"st = d['stringTable']\n"
	"link = d['linkTable'][0]\n"
	"if link.get('traceId') != '0' * 32 or link.get('spanId') != '0' * 16:\n"
	"    errors.append('link_table[0] ids are not hex zeros: %r' % link)\n"
	"if WEIRD is not None and WEIRD not in st:\n"
	"    errors.append('the weird function name did not round-trip: %r' % st)\n"
	"def S(i): return st[i]\n"
	"def anyv(v):\n"
	"    return v['stringValue'] if 'stringValue' in v else str(int(v['intValue']))\n"
	"def attr(i):\n"
	"    a = d['attributeTable'][i]\n"
	"    return '%s=%s' % (S(a.get('keyStrindex', 0)), anyv(a['value']))\n"
	"def vt(t):\n"
	"    return '%s/%s' % (S(t.get('typeStrindex', 0)), S(t.get('unitStrindex', 0))) if t else "
	"'/'\n"
	"def fname(li):\n"
	"    return '+'.join(S(d['functionTable'][l.get('functionIndex', 0)].get('nameStrindex', "
	"0))\n"
	"                    for l in d['locationTable'][li].get('lines', []))\n"
	"out = ['D ' + ' '.join(str(len(d.get(k, []))) for k in ('mappingTable', 'locationTable',\n"
	"        'functionTable', 'linkTable', 'stringTable', 'attributeTable', 'stackTable'))]\n"
	"for m in d.get('mappingTable', []):\n"
	"    out.append('M %d %d %d %s |%s' % (int(m.get('memoryStart', '0')),\n"
	"        int(m.get('memoryLimit', '0')), int(m.get('fileOffset', '0')),\n"
	"        S(m.get('filenameStrindex', 0)),\n"
	"        ''.join(' ' + attr(i) for i in m.get('attributeIndices', []))))\n"
	"for l in d.get('locationTable', []):\n"
	"    fs = ''.join(' %s@%s' % (S(d['functionTable'][x.get('functionIndex', 0)].get(\n"
	"        'nameStrindex', 0)), S(d['functionTable'][x.get('functionIndex', 0)].get(\n"
	"        'filenameStrindex', 0))) for x in l.get('lines', []))\n"
	"    out.append('L %d %d |%s |%s' % (l.get('mappingIndex', 0), int(l.get('address', "
	"'0')),\n"
	"        fs, ''.join(' ' + attr(i) for i in l.get('attributeIndices', []))))\n"
	"seen = set()\n"
	"for rp in doc.get('resourceProfiles', []):\n"
	"    out.append('R')\n"
	"    for kv in rp['resource'].get('attributes', []):\n"
	"        out.append('A %s=%s' % (kv['key'], anyv(kv['value'])))\n"
	"    for sp in rp['scopeProfiles']:\n"
	"        out.append('C %s %s' % (sp['scope'].get('name', ''), sp['scope'].get('version', "
	"'')))\n"
	"        for p in sp.get('profiles', []):\n"
	"            if p['timeUnixNano'] not in times:\n"
	"                errors.append('timeUnixNano %r not one of %r' % (p['timeUnixNano'], "
	"times))\n"
	"            seen.add(p['timeUnixNano'])\n"
	"            out.append('P %s %s %d %d %d' % (vt(p.get('sampleType')), "
	"vt(p.get('periodType')),\n"
	"                int(p.get('period', '0')), int(p.get('timeUnixNano', '0')),\n"
	"                int(p.get('durationNano', '0'))))\n"
	"            for s in p.get('samples', []):\n"
	"                locs = d['stackTable'][s.get('stackIndex', 0)].get('locationIndices', "
	"[])\n"
	"                out.append('S %s |%s |%s' % (';'.join(fname(li) for li in locs),\n"
	"                    ''.join(' ' + attr(i) for i in s.get('attributeIndices', [])),\n"
	"                    ''.join((',' if j else ' ') + str(int(v))\n"
	"                            for j, v in enumerate(s.get('values', [])))))\n"
	"if seen != times:\n"
	"    errors.append('profile times %r, want %r' % (seen, times))\n"
	"if errors:\n"
	"    sys.stderr.write('\\n'.join(errors) + '\\n')\n"
	"    sys.exit(1)\n"
	"sys.stdout.buffer.write(('\\n'.join(out) + '\\n').encode('utf-8'))\n";

/* Runs the Python check on a JSON file; compares what it read with the binary request. */
static void check_json(const char *python, const char *json_path, const uint8_t *bin,
		       size_t bin_len, const char *weird, const char *times)
{
	pb_request *req = unpack_request(bin_len, bin);
	char *script = NULL, *text = NULL, *got = NULL, *want = NULL;
	size_t got_len = 0;

	CHECK(req != NULL, "protobuf-c cannot unpack the request");
	if (!req)
		return;
	if (asprintf(&script, "%s/check_json.py", tmpdir) < 0 ||
	    asprintf(&text, "WEIRD = %s\n%s", weird, json_check_py) < 0) {
		CHECK(false, "asprintf");
		goto out;
	}
	CHECK(write_file(script, text, strlen(text)) == 0, "write %s", script);
	got = run(&got_len, "'%s' '%s' %s < '%s'", python, script, times, json_path);
	want = digest(req, true);
	if (got && want)
		CHECK(got_len == strlen(want) && memcmp(got, want, got_len) == 0,
		      "JSON and binary differ:\n--- JSON\n%.*s--- binary\n%s", (int)got_len, got,
		      want);
out:
	if (script)
		unlink(script);
	free(want);
	free(got);
	free(text);
	free(script);
	free_request(req);
}

/* --- 6. errors, and what is left on disk --- */

static int count_entries(const char *dir)
{
	char *cmd = NULL, line[64] = "";
	FILE *f;

	if (asprintf(&cmd, "ls -A '%s' | wc -l", dir) < 0)
		return -1;
	f = popen(cmd, "r");
	free(cmd);
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	pclose(f);
	return atoi(line);
}

static void check_errors(const struct profile *const *profiles, size_t n)
{
	const struct profile *with_null[] = {profiles[0], NULL};
	char path[512], dir[128];
	uint8_t *buf = NULL;
	char *json = NULL;
	size_t len = 0;
	struct stat st;
	int before;

	snprintf(dir, sizeof(dir), "%s/errors", tmpdir);
	CHECK(mkdir(dir, 0700) == 0, "mkdir %s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/nonexistent/out.otlp.pb", dir);
	CHECK(enc_otlp__write(profiles, n, &opts, path) == -ENOENT, "write into a missing dir");
	snprintf(path, sizeof(path), "%s/nonexistent/out.otlp.json", dir);
	CHECK(enc_otlp__write_json(profiles, n, &opts, path) == -ENOENT,
	      "write json into a missing dir");
	snprintf(path, sizeof(path), "%s/nonexistent", dir);
	CHECK(stat(path, &st) < 0 && errno == ENOENT, "the missing directory was created");
	CHECK(count_entries(dir) == 0, "files left behind in %s", dir);

	/* A directory we cannot write to (nobody owns it, mode 0500). */
	snprintf(path, sizeof(path), "%s/ro", dir);
	CHECK(mkdir(path, 0500) == 0, "mkdir %s", path);
	snprintf(path, sizeof(path), "%s/ro/out.otlp.pb", dir);
	if (geteuid() != 0)
		CHECK(enc_otlp__write(profiles, n, &opts, path) == -EACCES, "write into 0500 dir");
	snprintf(path, sizeof(path), "%s/ro", dir);
	CHECK(count_entries(path) == 0, "files left behind in %s", path);
	chmod(path, 0700);

	before = count_entries(tmpdir);
	snprintf(path, sizeof(path), "%s/x.otlp.pb", tmpdir);
	CHECK(enc_otlp__write(with_null, 2, &opts, path) == -EINVAL, "NULL profile");
	CHECK(enc_otlp__write(NULL, 1, &opts, path) == -EINVAL, "NULL profile array");
	CHECK(enc_otlp__write(profiles, n, &opts, NULL) == -EINVAL, "NULL path");
	CHECK(enc_otlp__write_json(profiles, n, &opts, NULL) == -EINVAL, "NULL json path");
	CHECK(enc_otlp__encode(profiles, n, &opts, NULL, &len) == -EINVAL, "NULL out");
	CHECK(enc_otlp__encode(profiles, n, &opts, &buf, NULL) == -EINVAL, "NULL len");
	CHECK(enc_otlp__encode_json(profiles, n, &opts, &json, NULL) == -EINVAL, "NULL json len");
	CHECK(buf == NULL && json == NULL, "output set on error");
	CHECK(count_entries(tmpdir) == before, "files left behind after EINVAL");
}

/* No profiles, or a profile without samples: the dictionary's zero entries and nothing else. */
static void check_empty(const struct otlp_opts *o)
{
	struct profile *empty = profile__new(&cpu_desc);
	const struct profile *one[] = {empty};
	uint8_t *buf = NULL;
	char *json = NULL;
	size_t len = 0, json_len = 0;

	CHECK(empty != NULL, "profile__new");
	if (!empty)
		return;
	for (size_t n = 0; n <= 1; n++) {
		pb_request *req;

		CHECK(enc_otlp__encode(n ? one : NULL, n, o, &buf, &len) == 0, "encode empty");
		req = buf ? unpack_request(len, buf) : NULL;
		CHECK(req && req->n_resource_profiles == 0 && req->dictionary,
		      "empty request: %zu resources", req ? req->n_resource_profiles : 0);
		if (req && req->dictionary) {
			char *got = digest(req, false);

			CHECK_STR(got, "D 1 1 1 1 1 1 1\n");
			free(got);
		}
		if (req)
			free_request(req);
		free(buf);
		buf = NULL;
	}
	CHECK(enc_otlp__encode_json(one, 1, NULL, &json, &json_len) == 0, "encode empty json");
	CHECK(json && strlen(json) == json_len && strstr(json, "resourceProfiles") == NULL &&
		      strstr(json, "\"stringTable\":[\"\"]"),
	      "empty json: %s", json ? json : "(null)");
	free(json);
	profile__delete(empty);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * Samples that served spans (OTEP 4947 thread context): one link_table entry per distinct
 * (trace, span) after the zero link, each sample's link_index pointing at its own, the context's
 * attributes as sample attributes; samples of one stack that differ only in span stay apart.
 */
static void test_links(void)
{
	static const uint32_t st[] = {1};
	struct profile *p = profile__new(&cpu_desc);
	struct profile_labels a = {.pid = 100, .tid = 101}, b = a, none = a;
	struct profile_function f = {0};
	struct profile_location l = {.kind = FRAME_NATIVE};
	uint8_t *buf = NULL;
	size_t len = 0;
	pb_request *req;
	int64_t stack;

	if (!p)
		return;
	f.name = f.system_name = str(p, "serve");
	l.function = (uint32_t)profile__function(p, &f);
	profile__location(p, &l);
	stack = profile__stack(p, st, 1);
	a.trace_id = str(p, "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01");
	a.span_id = str(p, "a1a1a1a1a1a1a1a1");
	a.nr_ctx_attrs = 1;
	a.ctx_attrs[0] = (struct profile_attr){str(p, "http.route"), str(p, "/checkout")};
	b.trace_id = a.trace_id;
	b.span_id = str(p, "b2b2b2b2b2b2b2b2");
	CHECK(stack > 0 && profile__add_sample(p, (uint32_t)stack, &a, 10, 1) == 0 &&
		      profile__add_sample(p, (uint32_t)stack, &b, 40, 2) == 0 &&
		      profile__add_sample(p, (uint32_t)stack, &none, 30, 3) == 0 &&
		      profile__add_sample(p, (uint32_t)stack, &a, 10, 1) == 0,
	      "samples with links");
	CHECK(profile__nr_samples(p) == 4, "three distinct samples (and slot 0): %zu",
	      profile__nr_samples(p));
	CHECK(enc_otlp__encode((const struct profile *const[]){p}, 1, &opts, &buf, &len) == 0,
	      "encode");
	req = buf ? unpack_request(len, buf) : NULL;
	CHECK(req && req->dictionary && req->dictionary->n_link_table == 3,
	      "link table: the zero link and two spans (%zu)",
	      req && req->dictionary ? req->dictionary->n_link_table : 0);
	if (req && req->dictionary && req->dictionary->n_link_table == 3 &&
	    req->n_resource_profiles == 1) {
		const pb_dictionary *d = req->dictionary;
		const Opentelemetry__Proto__Profiles__V1development__Profile *pr =
			req->resource_profiles[0]->scope_profiles[0]->profiles[0];
		int seen = 0;

		CHECK(d->link_table[0]->trace_id.len == 16 && !d->link_table[0]->trace_id.data[0] &&
			      d->link_table[0]->span_id.len == 8,
		      "entry 0 is the all-zero link");
		for (size_t i = 0; i < pr->n_samples; i++) {
			const Opentelemetry__Proto__Profiles__V1development__Sample *sm =
				pr->samples[i];
			const Opentelemetry__Proto__Profiles__V1development__Link *lk =
				d->link_table[sm->link_index];
			const char *last_key =
				sm->n_attribute_indices
					? S(req,
					    d->attribute_table
						    [sm->attribute_indices[sm->n_attribute_indices -
									   1]]
							    ->key_strindex)
					: "";

			if (sm->values[0] == 30) /* none */
				seen += sm->link_index == 0;
			else if (sm->values[0] == 40) /* b */
				seen += lk->span_id.data[0] == 0xb2 &&
					lk->trace_id.data[15] == 0x01;
			else if (sm->values[0] == 20) /* a, its two samples merged */
				seen += lk->span_id.data[0] == 0xa1 &&
					!strcmp(last_key, "http.route");
		}
		CHECK(seen == 3,
		      "each sample points at its own link (and span A carries "
		      "http.route): %d of 3",
		      seen);
	}
	free_request(req);
	free(buf);
	profile__delete(p);
}

int main(void)
{
	struct profile *cpu, *off_cpu;
	const struct profile *profiles[2];
	struct otlp_opts counts = opts;
	char pb_path[256], json_path[256], counts_path[256], times[96];
	uint8_t *buf = NULL, *again = NULL, *file = NULL;
	size_t len = 0, again_len = 0, file_len = 0;
	char *protoc, *python;
	bool have_protos;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_links();
	cpu = build_cpu();
	off_cpu = build_off_cpu();
	if (!cpu || !off_cpu)
		goto out;
	profiles[0] = cpu;
	profiles[1] = off_cpu;
	snprintf(pb_path, sizeof(pb_path), "%s/req.otlp.pb", tmpdir);
	snprintf(json_path, sizeof(json_path), "%s/req.otlp.json", tmpdir);
	snprintf(counts_path, sizeof(counts_path), "%s/counts.otlp.pb", tmpdir);

	CHECK(enc_otlp__encode(profiles, 2, &opts, &buf, &len) == 0, "encode");
	CHECK(enc_otlp__write(profiles, 2, &opts, pb_path) == 0, "write");
	CHECK(enc_otlp__write_json(profiles, 2, &opts, json_path) == 0, "write json");
	counts.samples_count = true;
	CHECK(enc_otlp__write(profiles, 2, &counts, counts_path) == 0, "write samples_count");
	if (!buf)
		goto out;
	/* The same input encodes to the same bytes, in memory and on disk. */
	CHECK(enc_otlp__encode(profiles, 2, &opts, &again, &again_len) == 0, "encode again");
	CHECK(again && again_len == len && memcmp(again, buf, len) == 0, "encoding not stable");
	CHECK(read_file(pb_path, &file, &file_len) == 0, "read %s", pb_path);
	CHECK(file && file_len == len && memcmp(file, buf, len) == 0, "file differs from buffer");

	protoc = find_tool("protoc", "/usr/bin/protoc");
	CHECK(protoc != NULL, "no protoc: install protobuf-compiler (apt-get install "
			      "protobuf-compiler), it decodes the request independently");
	have_protos = access("proto/" PROTO_FILE, R_OK) == 0;
	CHECK(have_protos, "proto/" PROTO_FILE " not readable from the working directory: run "
			   "from the repository root (tests/run-unit.sh must copy proto/ too)");
	if (protoc && have_protos)
		check_protoc_text(protoc, pb_path);
	/* decode_raw needs no schema. */
	if (protoc)
		check_protoc_raw(protoc, pb_path);
	free(protoc);

	check_unpacked(buf, len, want_digest);
	free(file);
	file = NULL;
	CHECK(read_file(counts_path, &file, &file_len) == 0, "read %s", counts_path);
	if (file)
		check_unpacked(file, file_len, want_digest_counts);

	python = find_tool("python3", "/usr/bin/python3");
	CHECK(python != NULL, "no python3: install python3, it reads the JSON independently");
	snprintf(times, sizeof(times), "%llu %llu", (unsigned long long)CPU_TIME,
		 (unsigned long long)OFF_CPU_TIME);
	if (python)
		check_json(python, json_path, buf, len, WEIRD_PY, times);
	/* The samples_count form in JSON too, against its own binary. */
	if (python && file) {
		char *json = NULL;
		size_t json_len = 0;

		CHECK(enc_otlp__encode_json(profiles, 2, &counts, &json, &json_len) == 0,
		      "encode json");
		snprintf(json_path, sizeof(json_path), "%s/counts.otlp.json", tmpdir);
		CHECK(json && write_file(json_path, json, json_len) == 0, "write %s", json_path);
		check_json(python, json_path, file, file_len, WEIRD_PY, times);
		free(json);
	}
	free(python);

	check_errors(profiles, 2);
	check_empty(&opts);
out:
	free(file);
	free(again);
	free(buf);
	profile__delete(off_cpu);
	profile__delete(cpu);
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return check_summary("test_enc_otlp");
}
