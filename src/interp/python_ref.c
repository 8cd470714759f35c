// SPDX-License-Identifier: BSD-2-Clause
#include "interp/python_ref.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python_check.h"
#include "process/proc_mem.h"
#include "symbols/dso.h"
#include "symbols/symbolize.h"

/* What is looked up in a candidate binary. */
enum python_sym {
	SYM_EVAL,	/* _PyEval_EvalFrameDefault: where BPF meets Python frames */
	SYM_RUNTIME,	/* _PyRuntime (3.7 on): where its interpreters are */
	SYM_CODE_TYPE,	/* PyCode_Type: every CPython exports it, 2.7 included */
	SYM_VERSION,	/* Py_Version (3.11 on) */
	SYM_FRAME_TYPE, /* PyFrame_Type: 3.10's frames are objects of it */
	SYM__COUNT,
};

static const char *const sym_names[SYM__COUNT] = {
	"_PyEval_EvalFrameDefault", "_PyRuntime", "PyCode_Type", "Py_Version", "PyFrame_Type",
};

/* A process's executable mappings read at once: more than most processes map. */
#define BINARIES_MAX 256
/* Of which candidates (the executable and libpython*): more would be a process playing games. */
#define CANDIDATES_MAX 4
/* Binaries remembered: the interpreters of a host, and the executables of its other processes
 * (one each), the oldest forgotten first. */
#define CACHE_SLOTS 256

/* What one binary holds, read once per identity. */
struct python_binary {
	uint64_t dev, inode;
	bool used;
	struct dso_symbol syms[SYM__COUNT]; /* ELF addresses; name NULL when absent */
};

struct python_ref_cache {
	struct python_binary slots[CACHE_SLOTS];
	size_t next; /* the slot the next binary takes: the oldest */
};

struct python_ref_cache *python_ref_cache__new(void)
{
	return calloc(1, sizeof(struct python_ref_cache));
}

void python_ref_cache__delete(struct python_ref_cache *c)
{
	free(c);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The executable, and libraries that can only be Python's: the others are not opened. */
static bool candidate(const struct process_binary *b)
{
	return b->is_exe || !strncmp(base_name(b->path), "libpython", 9);
}

static bool has(const struct python_binary *b, enum python_sym s)
{
	return b->syms[s].name != NULL;
}

/* A CPython of any release: PyCode_Type is in every one. */
static bool is_cpython(const struct python_binary *b)
{
	return has(b, SYM_CODE_TYPE);
}

/* What binary b of process pid holds: from the cache, else read (and remembered). NULL with
 * *err set when it could not be read. */
static const struct python_binary *binary_syms(struct python_ref_cache *c, struct symbolizer *sym,
					       pid_t pid, const struct process_binary *b, int *err)
{
	struct python_binary *slot;
	struct python_binary fresh = {.dev = b->dev, .inode = b->inode, .used = true};
	int n;

	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		slot = &c->slots[i];
		if (slot->used && slot->dev == b->dev && slot->inode == b->inode)
			return slot;
	}
	n = symbolizer__find_exports(sym, pid, b->dev, b->inode, sym_names, SYM__COUNT, fresh.syms);
	if (n < 0) {
		*err = n;
		return NULL;
	}
	slot = &c->slots[c->next];
	c->next = (c->next + 1) % CACHE_SLOTS;
	*slot = fresh;
	return slot;
}

/* "python3.10", "libpython3.10.so.1.0", "libpython2.7.so": the release in a file's name. */
static bool name_version(const char *path, int *major, int *minor)
{
	const char *p = base_name(path);
	char *end;
	long ma, mi;

	if (!strncmp(p, "libpython", 9))
		p += 9;
	else if (!strncmp(p, "python", 6))
		p += 6;
	else
		return false;
	if (!isdigit((unsigned char)*p))
		return false;
	ma = strtol(p, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return false;
	mi = strtol(end + 1, &end, 10);
	if (ma > 99 || mi > 99)
		return false;
	*major = (int)ma;
	*minor = (int)mi;
	return true;
}

/* "3.11.2" from PY_VERSION_HEX's 0xMMmmppLS: level 0xa alpha, 0xb beta, 0xc candidate, 0xf
 * final. */
static void format_hexversion(uint32_t v, char *buf, size_t len)
{
	static const char *const levels[16] = {[0xa] = "a", [0xb] = "b", [0xc] = "rc"};
	unsigned int level = (v >> 4) & 0xf, serial = v & 0xf;

	if (levels[level])
		snprintf(buf, len, "%u.%u.%u%s%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff,
			 levels[level], serial);
	else
		snprintf(buf, len, "%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
}

static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return proc_mem__read((pid_t)(intptr_t)ctx, addr, buf, len);
}

/* The release of the CPython in b: Py_Version from memory when it has one, else its name. */
static int find_version(pid_t pid, const struct python_binary *b, uint64_t bias,
			struct python_proc *out, uint32_t *hexversion, char *why, size_t len)
{
	int major = 0, minor = 0, err;

	*hexversion = 0;
	if (has(b, SYM_VERSION)) {
		err = proc_mem__read(pid, b->syms[SYM_VERSION].addr + bias, hexversion,
				     sizeof(*hexversion));
		if (err) {
			snprintf(why, len, "reading Py_Version in PID %d: %s", (int)pid,
				 strerror(-err));
			return err == -EFAULT ? -EINVAL : err;
		}
		out->minor = (int)((*hexversion >> 16) & 0xff);
		out->micro = (int)((*hexversion >> 8) & 0xff);
		if (*hexversion >> 24 != 3 || out->minor < 11) {
			snprintf(why, len, "PID %d's Py_Version 0x%08x is no release of 3.11 on",
				 (int)pid, *hexversion);
			return -EINVAL;
		}
		format_hexversion(*hexversion, out->version, sizeof(out->version));
		return 0;
	}
	if (!name_version(out->binary, &major, &minor)) {
		snprintf(why, len,
			 "a CPython before 3.11 in PID %d (%s) whose file name does not tell its "
			 "release: frames not walked",
			 (int)pid, out->binary);
		return -ENOTSUP;
	}
	out->minor = minor;
	snprintf(out->version, sizeof(out->version), "%d.%d", major, minor);
	if (major == 3 && minor >= 11) {
		snprintf(why, len, "PID %d's %s names Python %s but has no Py_Version", (int)pid,
			 out->binary, out->version);
		return -EINVAL;
	}
	return major == 3 ? 0 : -ENOTSUP;
}

/* Which of pid's binaries holds CPython, or NULL (then *err says why, or -ENOENT). */
static const struct python_binary *find_binary(struct python_ref_cache *c, struct symbolizer *sym,
					       pid_t pid, struct python_proc *out, int *err)
{
	struct process_binary some[BINARIES_MAX], *bins = some;
	const struct python_binary *found = NULL;
	struct candidate_binary {
		struct process_binary b;
		char path[sizeof(out->binary)];
	} cands[CANDIDATES_MAX];
	int n = symbolizer__binaries(sym, pid, bins, BINARIES_MAX), ncands = 0, room = BINARIES_MAX;

	/* A Python program with hundreds of extension modules maps more than that. */
	if (n > BINARIES_MAX) {
		room = n;
		bins = calloc((size_t)room, sizeof(*bins));
		n = bins ? symbolizer__binaries(sym, pid, bins, (size_t)room) : -ENOMEM;
	}
	*err = n < 0 ? n : -ENOENT;
	/* The paths are the snapshot's: copied before the symbolizer is called again. */
	for (int i = 0; i < n && i < room && ncands < CANDIDATES_MAX; i++) {
		if (!candidate(&bins[i]))
			continue;
		cands[ncands].b = bins[i];
		snprintf(cands[ncands].path, sizeof(cands[ncands].path), "%s", bins[i].path);
		cands[ncands].b.path = cands[ncands].path;
		ncands++;
	}
	if (bins != some)
		free(bins);
	for (int i = 0; i < ncands; i++) {
		const struct python_binary *b;
		int read_err = 0;

		b = binary_syms(c, sym, pid, &cands[i].b, &read_err);
		if (!b) {
			*err = read_err;
			continue;
		}
		/* The one with the runtime wins over an older CPython's leftovers. */
		if (is_cpython(b) &&
		    (!found || (has(b, SYM_RUNTIME) && !has(found, SYM_RUNTIME)))) {
			found = b;
			snprintf(out->binary, sizeof(out->binary), "%s", cands[i].path);
		}
	}
	return found;
}

static int not_walked(pid_t pid, const struct python_proc *out, char *why, size_t len)
{
	snprintf(why, len, "Python %s in PID %d: frames not walked (hostprof walks 3.%d to 3.%d)",
		 out->version, (int)pid, PYTHON_LAYOUT_MIN_MINOR, PYTHON_LAYOUT_MAX_MINOR);
	return -ENOTSUP;
}

int python_ref__resolve(struct python_ref_cache *c, struct symbolizer *sym, pid_t pid,
			struct python_proc *out, char *why, size_t len)
{
	const struct python_layout *l;
	const struct python_binary *b;
	struct python_addrs a = {0};
	struct python_mem mem = {.read = read_pid, .ctx = (void *)(intptr_t)pid};
	uint64_t bias = 0;
	char check[192];
	int err;

	memset(out, 0, sizeof(*out));
	out->minor = out->micro = -1;
	b = find_binary(c, sym, pid, out, &err);
	if (!b) {
		if (err == -ENOENT)
			snprintf(why, len, "no CPython in PID %d", (int)pid);
		else if (err == -ESRCH)
			snprintf(why, len, "PID %d is gone", (int)pid);
		else
			snprintf(why, len, "PID %d's binaries: %s", (int)pid, strerror(-err));
		return err == -EACCES ? -EPERM : err;
	}
	err = symbolizer__load_bias(sym, pid, b->dev, b->inode, &bias);
	if (err) {
		snprintf(why, len, "where PID %d loaded %s: %s", (int)pid, out->binary,
			 strerror(-err));
		return err == -ESRCH ? err : -EINVAL;
	}
	err = find_version(pid, b, bias, out, &a.hexversion, why, len);
	if (err == -ENOTSUP && out->version[0])
		return not_walked(pid, out, why, len);
	if (err)
		return err;
	l = python_layout__get(out->minor);
	if (!l || !has(b, SYM_EVAL) || !has(b, SYM_RUNTIME))
		return not_walked(pid, out, why, len);
	if (!b->syms[SYM_EVAL].size) {
		snprintf(why, len, "PID %d's %s: _PyEval_EvalFrameDefault has no size", (int)pid,
			 out->binary);
		return -EINVAL;
	}
	a.runtime = b->syms[SYM_RUNTIME].addr + bias;
	a.code_type = b->syms[SYM_CODE_TYPE].addr + bias;
	a.frame_type = has(b, SYM_FRAME_TYPE) ? b->syms[SYM_FRAME_TYPE].addr + bias : 0;
	err = python_check__layout(&mem, l, &a, check, sizeof(check));
	if (err) {
		snprintf(why, len, "Python %s in PID %d (%s): %s", out->version, (int)pid,
			 out->binary, check);
		return err;
	}
	out->layout = l;
	out->runtime = a.runtime;
	out->code_type = a.code_type;
	out->eval_start = b->syms[SYM_EVAL].addr + bias;
	out->eval_end = out->eval_start + b->syms[SYM_EVAL].size;
	snprintf(why, len, "Python %s in PID %d (%s)", out->version, (int)pid, out->binary);
	return 0;
}
