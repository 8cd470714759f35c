/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython's frames, walked with the native stack (see HP_PY_FRAME in hostprof_abi.h).
 *
 * A native frame of _PyEval_EvalFrameDefault is where the interpreter runs Python code: the
 * walker records the Python frames that call of the loop runs in its place, then goes on with the
 * native frames of its caller. C extensions and native code between two calls of the loop stay
 * where they are. Which Python frames belong to one call of the loop (enum hp_py_frames):
 * - 3.10: one PyFrameObject per call; the chain is tstate->frame, f_back, ...
 * - 3.11: the frames pushed since the call's entry frame (is_entry set), inclusive;
 * - 3.12 on: those above the frame the call pushed for the C stack (owner FRAME_OWNED_BY_CSTACK),
 *   which is skipped.
 *
 * The thread's PyThreadState is found in its interpreter's list of thread states by the thread's
 * id (3.11 on: native_thread_id, the id gettid() gives in the process's own PID namespace, which
 * is not the host's in a container; 3.10: thread_id, which is pthread_self(), the TLS pointer on
 * x86_64), whether or not the thread holds the GIL, and remembered per thread in py_tstates with
 * that id; a remembered one is checked again with one read. Every value comes from the process's
 * memory, which the process may have written to mislead: each is only an address to try, and the
 * host checks what it names (a code object of the interpreter's PyCode_Type) before it names a
 * frame.
 *
 * Userspace (src/interp/) fills py_procs for the processes that run a known CPython; for every
 * other process the walk costs one failed lookup.
 */
#ifndef HOSTPROF_PYTHON_BPF_H
#define HOSTPROF_PYTHON_BPF_H

#include "common.bpf.h"

/* Per process (tgid): its interpreter's layout and addresses. Written by userspace only; shared
 * by every object, like unwind_procs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct hp_py_proc);
} py_procs SEC(".maps");

/* A thread's PyThreadState, as last found, and the id the interpreter knows the thread by. */
struct hp_py_thread {
	__u64 tstate;
	__u64 id;
};

/* Per thread (the host's id). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct hp_py_thread);
} py_tstates SEC(".maps");

/*
 * One read per Python frame rather than one per field: HP_PY_FRAME_READ or HP_PY_IFRAME_READ
 * bytes (hostprof_abi.h). A _PyInterpreterFrame (3.11 on) lies in its thread's data stack, its
 * caller's frame right below it: the read takes HP_PY_WINDOW bytes that end with the frame, and
 * the next frames of the chain are often in them already (a probe-read costs ~55 ns, more than
 * half of a Python frame's walk; bench/bench_python.sh).
 */
#define HP_PY_WINDOW 2048

/* Thread states looked at per walk, at most: a process with more threads than this whose thread
 * is not remembered yet keeps its native frames for that sample. */
#define HP_PY_MAX_THREADS 64

/* Where a walk is in the Python frame chain of its thread. */
enum hp_py_walk_state {
	HP_PY_IDLE = 0, /* no evaluation loop met yet: the chain is not read */
	HP_PY_EMIT,	/* the frames of the loop just met go into the stack next */
	HP_PY_LOOP_END, /* the loop's frames are all in: the next step leaves its native frame */
	HP_PY_NATIVE,	/* between two loops: native frames */
	HP_PY_GONE,	/* the chain could not be read: native frames only */
};

/*
 * The Python side of one walk, in per-CPU memory rather than on the walk's stack: the verifier
 * follows every value a stack slot takes across the walker's steps, and a state and a count that
 * change from one step to the next multiplied the states it explored past its limit, and so did a
 * pointer that is NULL for some processes and not for others. What it reads from a map it takes as
 * any value, once.
 */
struct hp_py_walk {
	struct hp_py_proc proc;	    /* the process's interpreter (a copy: no pointer lives on) */
	__u64 frame;		    /* the next Python frame of the chain; 0 at its end */
	__u64 out;		    /* hp_py_step()'s Python frame, for HP_PY_PUSH */
	__u64 word;		    /* a value being read */
	struct hp_py_thread thread; /* the thread's PyThreadState, once found, and its id */
	__u32 tid;		    /* the thread's id on the host */
	__u8 active;		    /* the process runs a known CPython */
	__u8 state;		    /* enum hp_py_walk_state */
	__u8 emitted;		    /* Python frames of the current loop so far */
	__u8 pad[1];
	__u64 window; /* the address buf starts at, when it holds a window of the data stack; else 0
		       */
	/* the frames read; the tail lets hp_py_field() take any offset of a 3.10 frame at any place
	 * of the window (the verifier checks the bounds, not the layout) */
	__u8 buf[HP_PY_WINDOW + HP_PY_FRAME_READ - HP_PY_IFRAME_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_py_walk);
} py_walks SEC(".maps");

/* The key of py_walks' one entry, in read-only data rather than on the stack of the calls that
 * look it up (see hp_py_tstate()). */
const volatile __u32 py_walk_key = 0;

/* Reset this CPU's Python walk for a new stack of process tgid. A call of its own: inlined, its
 * two ends (a Python process or not) left different registers in the walk's program, and the
 * verifier went through the whole walk once for each. */
static __noinline void hp_py_begin(__u32 tgid)
{
	const struct hp_py_proc *proc = bpf_map_lookup_elem(&py_procs, &tgid);
	struct hp_py_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&py_walks, &zero);
	if (!w)
		return;
	w->active = proc != NULL;
	if (proc)
		w->proc = *proc;
	w->frame = 0;
	w->window = 0;
	w->state = HP_PY_IDLE;
	w->emitted = 0;
}

/* The Python frame hp_py_step() left for HP_PY_PUSH. */
static __always_inline __u64 hp_py_out(void)
{
	struct hp_py_walk *w = bpf_map_lookup_elem(&py_walks, (const void *)&py_walk_key);

	return w ? w->out : 0;
}

/* This CPU's Python walk, when the stack being walked is a Python process's. */
static __always_inline struct hp_py_walk *hp_py_walk(void)
{
	struct hp_py_walk *w;

	w = bpf_map_lookup_elem(&py_walks, (const void *)&py_walk_key);
	return w && w->active ? w : NULL;
}

/*
 * Read a pointer-sized value of the process into w->word. The walk's Python side keeps what it
 * reads in per-CPU memory, not on the stack: it runs two calls deep under the native walker's
 * bpf_loop, and the three frames together must stay within the 512 bytes of stack BPF allows.
 */
static __always_inline bool hp_py_read(struct hp_py_walk *w, __u64 addr)
{
	return bpf_probe_read_user(&w->word, sizeof(w->word), (const void *)addr) == 0;
}

/* A pointer-sized field at off of the read bytes at buf: offsets come from userspace, so each is
 * checked against what was read (read bytes) before it is used; 0 beyond it. */
static __always_inline __u64 hp_py_u64(const __u8 *buf, __u16 off, __u16 read)
{
	if (off > read - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

/* A pointer of the thread state hp_py_read_tstate() read last. */
static __always_inline __u64 hp_py_tstate_field(const struct hp_py_walk *w, __u16 off)
{
	return hp_py_u64(w->buf, off, HP_PY_TSTATE_READ);
}

/*
 * Read the thread state at addr: its first HP_PY_TSTATE_READ bytes into w->buf, and the id of its
 * thread into w->word. One read takes every field the walk wants of it.
 */
static __always_inline bool hp_py_read_tstate(struct hp_py_walk *w, __u64 addr)
{
	if (bpf_probe_read_user(w->buf, HP_PY_TSTATE_READ, (const void *)addr))
		return false;
	w->word = hp_py_tstate_field(w, w->proc.tstate_thread);
	return true;
}

/*
 * The id the interpreter knows the current thread by (enum hp_py_thread_match), into w->word:
 * for native_thread_id, its id in the innermost PID namespace (task->thread_pid->numbers[level]),
 * which is the host's outside containers.
 */
static __always_inline bool hp_py_thread_id(struct hp_py_walk *w)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *pid;
	__u64 at;

	if (w->proc.thread_match != HP_PY_MATCH_TID) {
		w->word = hp_thread_pointer();
		return w->word != 0;
	}
	pid = BPF_CORE_READ(task, thread_pid);
	at = (__u64)pid + bpf_core_field_offset(struct pid, numbers) +
	     (__u64)(BPF_CORE_READ(pid, level) & 31) * bpf_core_type_size(struct upid) +
	     bpf_core_field_offset(struct upid, nr);
	w->word = 0;
	return pid && bpf_probe_read_kernel(&w->word, sizeof(int), (const void *)at) == 0;
}

/* The current thread's PyThreadState, or 0; its bytes are left in w->buf. Keys and values of its
 * map calls live in w too: on Linux 6.1 the 16 bytes they took on this call's stack put the walk
 * past the 512 bytes of stack its three calls may take together. */
static __always_inline __u64 hp_py_tstate(struct hp_py_walk *w)
{
	const struct hp_py_proc *proc = &w->proc;
	struct hp_py_thread *known;

	w->tid = (__u32)bpf_get_current_pid_tgid();
	known = bpf_map_lookup_elem(&py_tstates, &w->tid);
	if (known) {
		w->thread = *known;
		if (hp_py_read_tstate(w, w->thread.tstate) && w->word == w->thread.id)
			return w->thread.tstate;
	}
	if (!hp_py_thread_id(w))
		return 0;
	w->thread.id = w->word;
	if (!hp_py_read(w, proc->runtime + proc->runtime_interp_head) || !w->word ||
	    !hp_py_read(w, w->word + proc->interp_tstate_head))
		return 0;
	/* A plain bounded loop: this function is a call of its own, where the verifier follows it
	 * once, and bpf_loop would want its context on the stack. */
	for (int i = 0; i < HP_PY_MAX_THREADS; i++) {
		w->thread.tstate = w->word;
		if (!w->thread.tstate || !hp_py_read_tstate(w, w->thread.tstate))
			return 0;
		if (w->word == w->thread.id) {
			bpf_map_update_elem(&py_tstates, &w->tid, &w->thread, BPF_ANY);
			return w->thread.tstate;
		}
		w->word = hp_py_tstate_field(w, proc->tstate_next);
	}
	return 0;
}

/* The thread's innermost Python frame, or 0. */
static __always_inline __u64 hp_py_current_frame(struct hp_py_walk *w)
{
	const struct hp_py_proc *proc = &w->proc;
	__u64 tstate = hp_py_tstate(w);

	if (!tstate)
		return 0;
	w->word = hp_py_tstate_field(w, proc->tstate_frame);
	if (!w->word)
		return 0;
	if (proc->cframe_frame != HP_PY_NO_OFFSET && !hp_py_read(w, w->word + proc->cframe_frame))
		return 0;
	return w->word;
}

/* A pointer of a frame read into buf (see hp_py_u64()). */
static __always_inline __u64 hp_py_field(const __u8 *buf, __u16 off)
{
	return hp_py_u64(buf, off, HP_PY_FRAME_READ);
}

static __always_inline __u8 hp_py_byte(const __u8 *buf, __u16 off)
{
	if (off >= HP_PY_FRAME_READ)
		return 0;
	return buf[off];
}

/*
 * The bytes of the frame at w->frame, in w->buf: at their place in the window when it holds them,
 * else read with the window that ends with the frame. The window starts no lower than the frame's
 * page: the page below may be unmapped (a data-stack chunk starts on a page of its own), and a
 * read that faults costs more than all the reads it would have saved. NULL when the frame cannot
 * be read.
 */
static __always_inline const __u8 *hp_py_frame_bytes(struct hp_py_walk *w)
{
	__u64 off = w->frame - w->window, page = w->frame & ~4095ULL;

	if (w->proc.frames == HP_PY_FRAMES_OBJECT) /* 3.10: heap objects, no locality */
		return bpf_probe_read_user(w->buf, HP_PY_FRAME_READ, (const void *)w->frame)
			       ? NULL
			       : w->buf;
	if (w->window && w->frame >= w->window && off <= HP_PY_WINDOW - HP_PY_IFRAME_READ)
		return w->buf + off;
	off = w->frame - page;
	if (off > HP_PY_WINDOW - HP_PY_IFRAME_READ)
		off = HP_PY_WINDOW - HP_PY_IFRAME_READ;
	w->window = w->frame - off;
	if (bpf_probe_read_user(w->buf, off + HP_PY_IFRAME_READ, (const void *)w->window)) {
		w->window = 0;
		return NULL;
	}
	return w->buf + off;
}

/*
 * One step of the Python chain: the next frame of the current loop into w->out, or false when that
 * loop has no more (w->state then leaves HP_PY_EMIT). The frame itself is read at once.
 */
static __always_inline bool hp_py_next(struct hp_py_walk *w)
{
	const struct hp_py_proc *proc = &w->proc;
	__u64 code, instr, index = 0;
	const __u8 *buf;
	bool last;

	if (!w->frame) {
		w->state = HP_PY_NATIVE;
		return false;
	}
	buf = hp_py_frame_bytes(w);
	if (!buf) {
		w->state = HP_PY_GONE;
		return false;
	}
	w->frame = hp_py_field(buf, proc->frame_previous);
	if (proc->frames == HP_PY_FRAMES_CSTACK &&
	    hp_py_byte(buf, proc->frame_entry) == proc->owner_cstack) {
		/* The frame the loop pushed for the C stack: the loop's own frames are above it. */
		w->state = HP_PY_NATIVE;
		return false;
	}
	code = hp_py_field(buf, proc->frame_code);
	instr = hp_py_field(buf, proc->frame_instr);
	if (proc->frames == HP_PY_FRAMES_OBJECT) {
		/* f_lasti: an int, the index of the last instruction run (-1 before the first). */
		__s32 lasti = (__s32)instr;

		index = lasti > 0 ? (__u64)lasti : 0;
		last = true;
	} else {
		__u64 first = code + proc->code_units;

		index = instr > first ? (instr - first) / 2 : 0;
		last = proc->frames == HP_PY_FRAMES_IS_ENTRY && hp_py_byte(buf, proc->frame_entry);
	}
	if (index > HP_PY_INDEX_MAX)
		index = HP_PY_INDEX_MAX;
	w->out = HP_PY_ENCODE(code, index);
	w->emitted++;
	if (last)
		w->state = HP_PY_LOOP_END;
	return true;
}

/*
 * A native frame at pc: true when it is the evaluation loop, whose Python frames are to go into
 * the stack in its place (w->state is then HP_PY_EMIT). The chain is read at the first one.
 */
static __always_inline bool hp_py_enter_loop(struct hp_py_walk *w, __u64 pc)
{
	const struct hp_py_proc *proc = &w->proc;

	if (w->state == HP_PY_GONE || pc < proc->eval_start || pc >= proc->eval_end)
		return false;
	if (w->state == HP_PY_IDLE) {
		w->frame = hp_py_current_frame(w);
		if (!w->frame)
			w->state = HP_PY_GONE;
	}
	if (!w->frame) /* nothing left to put in its place: the native frame stays */
		return false;
	w->state = HP_PY_EMIT;
	w->emitted = 0;
	return true;
}

/* What the native walker does with a frame (hp_py_step()). */
enum hp_py_action {
	HP_PY_KEEP_NATIVE = 0, /* record the native PC and step, as for any frame */
	HP_PY_PUSH,	       /* record the Python frame in py_walks' out; do not step */
	HP_PY_ENTERED,	       /* the evaluation loop: record nothing, do not step yet */
	HP_PY_LOOP_DONE,       /* its Python frames are in: step from its native frame unrecorded */
};

/*
 * The Python side of one step of the walk, for the native frame at pc (enum hp_py_action). A
 * call of its own, so that the native walker's states do not multiply by its branches.
 */
__noinline int hp_py_step(__u64 pc)
{
	struct hp_py_walk *w = hp_py_walk();

	if (!w)
		return HP_PY_KEEP_NATIVE;
	if (w->state == HP_PY_EMIT || w->state == HP_PY_LOOP_END) {
		if (w->state == HP_PY_EMIT && hp_py_next(w))
			return HP_PY_PUSH;
		if (w->state != HP_PY_GONE)
			w->state = HP_PY_NATIVE;
		/* Its own native frame is dropped, unless no Python frame took its place. */
		return w->emitted ? HP_PY_LOOP_DONE : HP_PY_KEEP_NATIVE;
	}
	return hp_py_enter_loop(w, pc) ? HP_PY_ENTERED : HP_PY_KEEP_NATIVE;
}

#endif /* HOSTPROF_PYTHON_BPF_H */
