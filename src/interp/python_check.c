// SPDX-License-Identifier: BSD-2-Clause
#include "interp/python_check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * PyTypeObject of a release build on LP64, 3.10 to 3.13 (Include/cpython/object.h): the
 * PyVarObject header (ob_refcnt, ob_type, ob_size), then tp_name, tp_basicsize, ...; tp_members
 * is the 31st word.
 */
#define TYPE_NAME 24
#define TYPE_BASICSIZE 32
#define TYPE_MEMBERS 240
#define TYPE_HEAD 248

/* PyMemberDef (Include/descrobject.h): name, type (int), offset (Py_ssize_t), flags, doc. */
#define MEMBER_SIZE 40
#define MEMBER_TYPE 8
#define MEMBER_OFFSET 16
#define MEMBER_INT 1	    /* T_INT, Py_T_INT */
#define MEMBER_OBJECT 6	    /* T_OBJECT, _Py_T_OBJECT */
#define MEMBER_OBJECT_EX 16 /* T_OBJECT_EX, Py_T_OBJECT_EX */
/* Code objects have 14 members (3.12), frames 6 (3.10): a longer list is not a type's. */
#define MEMBERS_MAX 64

/* Long enough for every name compared ("co_firstlineno", "frame") and then some. */
#define NAME_READ 24

/* User addresses stay below this on x86_64 and arm64 (as hp_user_pc() assumes). */
#define USER_LIMIT (1ULL << 56)
/* PID_MAX_LIMIT on 64-bit kernels: no thread id is above it. */
#define TID_LIMIT 4194304
/* Thread states checked for their way back to the interpreter (the list may be long). */
#define TSTATES_CHECKED 16

#define NONE HP_PY_NO_OFFSET

struct checker {
	const struct python_mem *mem;
	char *why;
	size_t len;
};

static int read_at(struct checker *c, uint64_t addr, void *buf, size_t n, const char *what)
{
	int err;

	if (!addr || addr >= USER_LIMIT || n > USER_LIMIT - addr) {
		snprintf(c->why, c->len, "%s: 0x%" PRIx64 " is no user address", what, addr);
		return -EINVAL;
	}
	err = c->mem->read(c->mem->ctx, addr, buf, n);
	if (!err)
		return 0;
	if (err == -ESRCH || err == -EPERM) {
		snprintf(c->why, c->len, "reading %s: %s", what,
			 err == -ESRCH ? "the process is gone"
				       : "not allowed (needs CAP_SYS_PTRACE or the same user)");
		return err;
	}
	snprintf(c->why, c->len, "%s at 0x%" PRIx64 " is not readable (%s)", what, addr,
		 strerror(-err));
	return -EINVAL;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int read_ptr(struct checker *c, uint64_t addr, uint64_t *v, const char *what)
{
	uint8_t b[8];
	int err;

	if (addr % 8) {
		snprintf(c->why, c->len, "%s: 0x%" PRIx64 " is not aligned", what, addr);
		return -EINVAL;
	}
	err = read_at(c, addr, b, sizeof(b), what);
	*v = err ? 0 : u64_at(b);
	return err;
}

/* A C string of at most size - 1 bytes, never read across a page it does not reach into: the
 * string may end just before an unmapped page. */
static int read_name(struct checker *c, uint64_t addr, char *buf, size_t size, const char *what)
{
	size_t first = 4096 - (addr & 4095);
	int err;

	if (first > size - 1)
		first = size - 1;
	memset(buf, 0, size);
	err = read_at(c, addr, buf, first, what);
	if (err || memchr(buf, '\0', first) || first == size - 1)
		return err;
	/* The rest, on the next page; an unmapped one means the name ended on this one. */
	if (c->mem->read(c->mem->ctx, addr + first, buf + first, size - 1 - first))
		buf[first] = '\0';
	return 0;
}

/* A member of a type that the layout places: its name, the layout's offset, its kind. */
struct member_want {
	const char *name;
	uint16_t offset; /* NONE: the layout does not read it (then its presence is not checked) */
	bool is_int;	 /* T_INT, else an object */
	bool required;	 /* the type must list it */
	bool seen;
};

static int check_member(struct checker *c, const char *type, struct member_want *w, int kind,
			int64_t offset)
{
	bool kind_ok =
		w->is_int ? kind == MEMBER_INT : kind == MEMBER_OBJECT || kind == MEMBER_OBJECT_EX;

	w->seen = true;
	if (!kind_ok) {
		snprintf(c->why, c->len, "%s.%s is of member type %d, not %s", type, w->name, kind,
			 w->is_int ? "an int" : "an object");
		return -EINVAL;
	}
	if (offset != w->offset) {
		snprintf(c->why, c->len, "%s.%s lies at offset %" PRId64 ", the layout says %u",
			 type, w->name, offset, w->offset);
		return -EINVAL;
	}
	return 0;
}

/*
 * The type object at addr: its name must be `name`, its tp_basicsize goes to *basicsize, and
 * its tp_members must agree with wants (which the layout reads, and which it must have).
 */
static int check_type(struct checker *c, uint64_t addr, const char *name, int64_t *basicsize,
		      struct member_want *wants, size_t nwants)
{
	uint8_t head[TYPE_HEAD], m[MEMBER_SIZE];
	char got[NAME_READ], what[64];
	uint64_t members;
	int err;

	snprintf(what, sizeof(what), "the %s type object", name);
	if (addr % 8) {
		snprintf(c->why, c->len, "%s: 0x%" PRIx64 " is not aligned", what, addr);
		return -EINVAL;
	}
	err = read_at(c, addr, head, sizeof(head), what);
	if (!err)
		err = read_name(c, u64_at(head + TYPE_NAME), got, sizeof(got), "its tp_name");
	if (err)
		return err;
	if (strcmp(got, name)) {
		snprintf(c->why, c->len, "%s at 0x%" PRIx64 " is named \"%.*s\"", what, addr, 16,
			 got);
		return -EINVAL;
	}
	*basicsize = (int64_t)u64_at(head + TYPE_BASICSIZE);
	members = u64_at(head + TYPE_MEMBERS);
	for (size_t i = 0; members && i < MEMBERS_MAX; i++) {
		uint64_t name_ptr;
		int32_t kind;

		/* The list ends with an entry of zeros, as long as the others. */
		err = read_at(c, members + i * MEMBER_SIZE, m, sizeof(m), "a tp_members entry");
		if (err)
			return err;
		name_ptr = u64_at(m);
		if (!name_ptr)
			break;
		err = read_name(c, name_ptr, got, sizeof(got), "a member's name");
		if (err)
			return err;
		memcpy(&kind, m + MEMBER_TYPE, sizeof(kind));
		for (size_t k = 0; k < nwants; k++) {
			if (wants[k].offset == NONE || strcmp(got, wants[k].name))
				continue;
			err = check_member(c, name, &wants[k], kind,
					   (int64_t)u64_at(m + MEMBER_OFFSET));
			if (err)
				return err;
		}
	}
	for (size_t k = 0; k < nwants; k++) {
		if (wants[k].required && wants[k].offset != NONE && !wants[k].seen) {
			snprintf(c->why, c->len, "the %s type lists no member %s", name,
				 wants[k].name);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_code(struct checker *c, const struct python_layout *l, uint64_t code_type)
{
	struct member_want wants[] = {
		{"co_filename", l->code_filename, false, true, false},
		{"co_name", l->code_name, false, true, false},
		{"co_qualname", l->code_qualname, false, true, false},
		{"co_firstlineno", l->code_firstlineno, true, true, false},
		/* Not a member in every release (a getter in some): checked where it is one. */
		{"co_linetable", l->code_linetable, false, false, false},
		{"co_code", l->code_bytes, false, false, false},
	};
	/* From 3.11 the code units follow the object's fixed part, which is what tp_basicsize
	 * counts (offsetof(PyCodeObject, co_code_adaptive)); sizeof rounds past it. */
	uint16_t want = l->code_units != NONE ? l->code_units : l->code_size;
	int64_t size = 0;
	int err = check_type(c, code_type, "code", &size, wants, sizeof(wants) / sizeof(wants[0]));

	if (err)
		return err;
	if (size != want) {
		snprintf(c->why, c->len,
			 "a code object's fixed part is %" PRId64 " bytes (PyCode_Type's "
			 "tp_basicsize), the layout of 3.%d says %u: a debug build, or another "
			 "release",
			 size, l->minor, want);
		return -EINVAL;
	}
	return 0;
}

/* 3.10's frames are objects: their type lists where f_back and f_code are. */
static int check_frame(struct checker *c, const struct python_layout *l, uint64_t frame_type)
{
	struct member_want wants[] = {
		{"f_back", l->frame_previous, false, false, false},
		{"f_code", l->frame_code, false, false, false},
	};
	int64_t size = 0;

	return check_type(c, frame_type, "frame", &size, wants, sizeof(wants) / sizeof(wants[0]));
}

/*
 * _Py_DebugOffsets, at the start of _PyRuntime from 3.13 on (Include/internal/pycore_runtime.h
 * of 3.13.0): a cookie, the version, whether the build is free-threaded, then groups of uint64_t
 * offsets, each group led by the size of its structure. The byte positions of what is compared.
 */
#define DEBUG_COOKIE "xdebugpy"
#define DEBUG_VERSION 8
#define DEBUG_FREE_THREADED 16
#define DEBUG_READ 352

struct debug_field {
	uint16_t at;  /* in _Py_DebugOffsets */
	size_t field; /* offsetof(struct python_layout, ...) */
	const char *name;
};

#define F(at, field, name)                                                                         \
	{                                                                                          \
		at, offsetof(struct python_layout, field), name                                    \
	}
static const struct debug_field debug_fields[] = {
	F(40, runtime_interp_head, "runtime_state.interpreters_head"),
	F(72, interp_tstate_head, "interpreter_state.threads_head"),
	F(168, tstate_next, "thread_state.next"),
	F(176, tstate_interp, "thread_state.interp"),
	F(184, tstate_frame, "thread_state.current_frame"),
	F(200, tstate_thread, "thread_state.native_thread_id"),
	F(232, frame_previous, "interpreter_frame.previous"),
	F(240, frame_code, "interpreter_frame.executable"),
	F(248, frame_instr, "interpreter_frame.instr_ptr"),
	F(264, frame_entry, "interpreter_frame.owner"),
	F(272, code_size, "code_object.size"),
	F(280, code_filename, "code_object.filename"),
	F(288, code_name, "code_object.name"),
	F(296, code_qualname, "code_object.qualname"),
	F(304, code_linetable, "code_object.linetable"),
	F(312, code_firstlineno, "code_object.firstlineno"),
	F(344, code_units, "code_object.co_code_adaptive"),
};
#undef F

static int check_debug_offsets(struct checker *c, const struct python_layout *l,
			       const struct python_addrs *a)
{
	uint8_t d[DEBUG_READ];
	int err = read_at(c, a->runtime, d, sizeof(d), "_PyRuntime's debug offsets");

	if (err)
		return err;
	if (memcmp(d, DEBUG_COOKIE, 8)) {
		snprintf(c->why, c->len, "_PyRuntime does not start with the cookie \"%s\"",
			 DEBUG_COOKIE);
		return -EINVAL;
	}
	if (u64_at(d + DEBUG_FREE_THREADED)) {
		snprintf(c->why, c->len, "a free-threaded build: its structures differ");
		return -ENOTSUP;
	}
	if (a->hexversion && u64_at(d + DEBUG_VERSION) != a->hexversion) {
		snprintf(c->why, c->len,
			 "_PyRuntime's debug offsets are of version 0x%08" PRIx64
			 ", Py_Version says 0x%08x",
			 u64_at(d + DEBUG_VERSION), a->hexversion);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(debug_fields) / sizeof(debug_fields[0]); i++) {
		const struct debug_field *f = &debug_fields[i];
		uint16_t want;

		memcpy(&want, (const char *)l + f->field, sizeof(want));
		if (u64_at(d + f->at) != want) {
			snprintf(c->why, c->len,
				 "_PyRuntime's debug offsets say %s is %" PRIu64
				 ", the layout of 3.%d says %u",
				 f->name, u64_at(d + f->at), l->minor, want);
			return -EINVAL;
		}
	}
	return 0;
}

/* _PyRuntime -> its first interpreter -> its thread states, each leading back to it. */
static int check_threads(struct checker *c, const struct python_layout *l, uint64_t runtime)
{
	uint64_t interp, tstate, back, id;
	int err = read_ptr(c, runtime + l->runtime_interp_head, &interp, "interpreters.head");

	if (err)
		return err;
	if (!interp) {
		snprintf(c->why, c->len, "not initialised yet (no interpreter): try later");
		return -EAGAIN;
	}
	err = read_ptr(c, interp + l->interp_tstate_head, &tstate, "the interpreter's threads");
	if (err)
		return err;
	if (!tstate) {
		snprintf(c->why, c->len, "not initialised yet (no thread state): try later");
		return -EAGAIN;
	}
	for (int i = 0; tstate && i < TSTATES_CHECKED; i++) {
		err = read_ptr(c, tstate + l->tstate_interp, &back, "a thread state's interp");
		if (!err)
			err = read_ptr(c, tstate + l->tstate_thread, &id, "a thread state's id");
		if (err)
			return err;
		if (back != interp) {
			snprintf(c->why, c->len,
				 "thread state 0x%" PRIx64 " names interpreter 0x%" PRIx64
				 ", not 0x%" PRIx64 ": the offsets of the thread list are wrong",
				 tstate, back, interp);
			return -EINVAL;
		}
		if (l->thread_match == HP_PY_MATCH_TID ? id > TID_LIMIT : id >= USER_LIMIT) {
			snprintf(c->why, c->len,
				 "thread state 0x%" PRIx64 " has thread id 0x%" PRIx64
				 ", which no thread has",
				 tstate, id);
			return -EINVAL;
		}
		err = read_ptr(c, tstate + l->tstate_next, &tstate, "a thread state's next");
		if (err)
			return err;
	}
	return 0;
}

int python_check__layout(const struct python_mem *mem, const struct python_layout *l,
			 const struct python_addrs *a, char *why, size_t len)
{
	struct checker c = {.mem = mem, .why = why, .len = len};
	int err;

	if (l->minor >= 13) {
		err = check_debug_offsets(&c, l, a);
		if (err)
			return err;
	}
	err = check_code(&c, l, a->code_type);
	if (!err && l->frames == HP_PY_FRAMES_OBJECT && a->frame_type)
		err = check_frame(&c, l, a->frame_type);
	if (!err)
		err = check_threads(&c, l, a->runtime);
	if (!err)
		snprintf(why, len, "the layout of 3.%d agrees with the running interpreter",
			 l->minor);
	return err;
}
