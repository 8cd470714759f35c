/* SPDX-License-Identifier: BSD-2-Clause */
#include "interp/interp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "interp/python_ref.h"

/* Processes remembered at most: past it the oldest is dropped. A process dropped here still has
 * its frames walked; they are named again once it is detected anew. Looked up only when a frame
 * misses the builder's location cache, so a plain array does. */
#define MAX_KNOWN 4096

struct known {
	pid_t pid;
	const struct python_layout *layout;
	uint64_t code_type;
	char version[16];
};

struct interp {
	struct symbolizer *sym;
	struct python_ref_cache *refs;
	struct python_code_cache *code;
	struct known *known;
	size_t nr_known, cap_known;
	uint64_t frames, frames_unresolved;
};

struct interp *interp__new(struct symbolizer *sym, size_t code_cache_bytes)
{
	struct interp *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->sym = sym;
	ip->refs = python_ref_cache__new();
	ip->code = python_code_cache__new(code_cache_bytes);
	if (!ip->refs || !ip->code) {
		interp__delete(ip);
		errno = ENOMEM;
		return NULL;
	}
	return ip;
}

void interp__delete(struct interp *ip)
{
	if (!ip)
		return;
	python_ref_cache__delete(ip->refs);
	python_code_cache__delete(ip->code);
	free(ip->known);
	free(ip);
}

static struct known *find(const struct interp *ip, pid_t pid)
{
	for (size_t i = 0; i < ip->nr_known; i++)
		if (ip->known[i].pid == pid)
			return &ip->known[i];
	return NULL;
}

static void remember(struct interp *ip, pid_t pid, const struct python_proc *py)
{
	struct known *k = find(ip, pid);

	if (!k) {
		if (ip->nr_known >= MAX_KNOWN)
			memmove(ip->known, ip->known + 1, --ip->nr_known * sizeof(*ip->known));
		if (VEC_RESERVE(ip->known, ip->cap_known, ip->nr_known + 1))
			return; /* its frames stay unnamed */
		k = &ip->known[ip->nr_known++];
	}
	*k = (struct known){.pid = pid, .layout = py->layout, .code_type = py->code_type};
	snprintf(k->version, sizeof(k->version), "%s", py->version);
}

int interp__detect(struct interp *ip, pid_t pid, struct hp_py_proc *out, char *why, size_t len)
{
	struct python_proc py;
	int err = python_ref__resolve(ip->refs, ip->sym, pid, &py, why, len);

	if (err) {
		interp__forget(ip, pid);
		return err;
	}
	remember(ip, pid, &py);
	python_layout__to_bpf(py.layout, py.runtime, py.eval_start, py.eval_end, out);
	snprintf(why, len, "Python %s in %s", py.version, py.binary);
	return 0;
}

const char *interp__version(const struct interp *ip, pid_t pid)
{
	const struct known *k = find(ip, pid);

	return k ? k->version : NULL;
}

static void unresolved(struct interp *ip, uint64_t pc, const char *what, struct frame *out)
{
	ip->frames_unresolved++;
	snprintf(out->unknown, sizeof(out->unknown), "[unknown] python code 0x%" PRIx64 " (%s)",
		 (uint64_t)HP_PY_CODE(pc), what);
}

void interp__symbolize(struct interp *ip, pid_t pid, uint64_t pc, struct frame *out)
{
	const struct known *k = find(ip, pid);
	struct python_frame_info info;
	int err;

	memset(out, 0, sizeof(*out));
	out->kind = FRAME_CPYTHON;
	/* The bytecode offset: what pprof shows as the location's address. */
	out->address = (uint64_t)HP_PY_INDEX(pc) * 2;
	ip->frames++;
	if (!k) {
		unresolved(ip, pc, "interpreter not known", out);
		return;
	}
	err = python_code__lookup(ip->code, pid, k->layout, k->code_type, HP_PY_CODE(pc),
				  HP_PY_INDEX(pc), &info);
	if (err) {
		unresolved(ip, pc,
			   err == -ESRCH    ? "process gone"
			   : err == -EINVAL ? "not a code object"
					    : "unreadable",
			   out);
		return;
	}
	out->function = info.qualname;
	out->nr_lines = 1;
	out->lines[0] = (struct frame_line){
		.function = info.qualname, .file = info.filename, .line = info.line};
}

void interp__expire(struct interp *ip)
{
	if (ip)
		python_code_cache__expire(ip->code);
}

void interp__forget(struct interp *ip, pid_t pid)
{
	struct known *k = find(ip, pid);

	if (k)
		*k = ip->known[--ip->nr_known];
	python_code_cache__forget_pid(ip->code, pid);
}

void interp__stats(const struct interp *ip, struct interp_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!ip)
		return;
	out->processes = ip->nr_known;
	out->frames = ip->frames;
	out->frames_unresolved = ip->frames_unresolved;
	python_code_cache__stats(ip->code, &out->code);
}
