/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user-stack walker: unwinds binaries built without frame pointers with the compact tables
 * that userspace derives from .eh_frame (see include/hostprof_abi.h and src/unwind/unwind_table.h).
 *
 * Per frame: find the mapping of the PC in the process's table (binary search), find the row of
 * its file address (the binary's index in the shared rows map, then a binary search among the few
 * rows of its bucket), compute the CFA, read the return address (and the saved frame pointer, once
 * a step needs it), and go on from the caller. Code without a row (JIT code,
 * a binary whose table is not loaded yet) takes a frame-pointer step instead, which is what the
 * kernel's own unwinder would have done.
 *
 * The walk runs under bpf_loop() (Linux 5.17+), one callback per frame, so its cost and its
 * verification do not grow with the depth. Without bpf_loop the cpu sampler walks across tail
 * calls (hp_walk_steps()), and the off-CPU and lock programs keep the kernel's frame-pointer
 * stacks (bpf_get_stackid). The bpf_loop walk lives in programs of its own, which userspace loads
 * only where bpf_loop exists: a kernel before 5.13 refuses any program that names a callback.
 *
 * Every object that includes this header has its own copy of these maps; userspace creates the
 * rows and procs maps once and hands the same file descriptors to every object before load.
 */
#ifndef HOSTPROF_UNWIND_BPF_H
#define HOSTPROF_UNWIND_BPF_H

#include "common.bpf.h"
#include "python.bpf.h"

/* Set by userspace between open and load. */
const volatile bool unwind_tables = false; /* walk with the tables (else bpf_get_stackid) */
/* No bpf_loop (Linux before 5.17): the sampler walks across tail calls (see hp_walk_steps()). */
const volatile bool unwind_tail_calls = false;
const volatile __u32 unwind_depth = HP_UNWIND_MAX_DEPTH;

/*
 * max_entries is set by userspace (the --unwind-table-rows cap). Mappable: userspace writes a
 * table with memcpy() into its mapping of the map; one update per row cost more CPU than the
 * agent's whole sampling when new binaries appear.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_unwind_row);
} unwind_rows SEC(".maps");

/* Per process (tgid): its executable mappings. Written by userspace only. Not preallocated: an
 * entry is 10 KiB and most hosts need a few hundred of them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct hp_unwind_proc);
} unwind_procs SEC(".maps");

/*
 * Processes whose walk met a PC outside the mappings loaded for them, or that have no entry yet
 * (exec, ld.so mapping libraries, dlopen, a process new to the host). Userspace (re)loads their
 * tables within one tick of its main loop and deletes the key; BPF_NOEXIST keeps one request per
 * process however many samples ask. Shared by every object, like the rows and procs maps.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} unwind_refresh SEC(".maps");

/*
 * Processes sampled for the first time and execs, as they happen: a process may live for a few
 * milliseconds only, and userspace must read its maps and binaries before it is gone, not at its
 * next tick or drain. Shared by every object, like unwind_refresh.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} unwind_events SEC(".maps");

/*
 * Only a process sampled for the first time is urgent (it may be gone in milliseconds): it wakes
 * the reader, always, since a reader behind on earlier records would not be woken otherwise. An
 * exec only makes an old snapshot stale and waits for the next wakeup or the reader's poll
 * timeout: a busy host execs a hundred short commands a second, which are rarely sampled, and a
 * wakeup for each cost the agent more than everything else it did at 19 Hz. The ring keeps the
 * order, so an exec's record is read before the first sample of its new image.
 */
static __always_inline void hp_proc_event(__u32 tgid, __u32 kind)
{
	struct hp_proc_event ev = {.tgid = tgid, .kind = kind};
	__u64 flags = kind == HP_UNWIND_REQ_LOAD ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_output(&unwind_events, &ev, sizeof(ev), flags);
}

/*
 * Processes announced since their exec. A process is announced at its first walk that finds no
 * table, and once more HP_ANNOUNCE_GAP_NS later if its tables are still not loaded: a first
 * sample inside ld.so comes before the libraries are mapped, and a second read catches them.
 * Independent of unwind_refresh, whose pending requests userspace takes only at its next tick.
 */
#define HP_ANNOUNCE_MAX 2
#define HP_ANNOUNCE_GAP_NS (10 * 1000 * 1000ULL)

struct hp_announced {
	__u64 last_ns;
	__u32 count;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct hp_announced);
} unwind_announced SEC(".maps");

static __always_inline void hp_announce(__u32 tgid)
{
	struct hp_announced fresh = {.count = 1}, *a;
	__u64 now = bpf_ktime_get_ns();

	a = bpf_map_lookup_elem(&unwind_announced, &tgid);
	if (!a) {
		fresh.last_ns = now;
		if (bpf_map_update_elem(&unwind_announced, &tgid, &fresh, BPF_NOEXIST) == 0)
			hp_proc_event(tgid, HP_UNWIND_REQ_LOAD);
		return;
	}
	/* Two CPUs may both pass here at once: one read too many, which is harmless. */
	if (a->count >= HP_ANNOUNCE_MAX || now - a->last_ns < HP_ANNOUNCE_GAP_NS)
		return;
	a->count++;
	a->last_ns = now;
	hp_proc_event(tgid, HP_UNWIND_REQ_LOAD);
}

/*
 * An exec or the exit of a whole process makes its entry wrong at once (new code at perhaps the
 * same addresses, or a PID that may come back as another process): drop it, so that walks take
 * frame-pointer steps, and tell userspace (enum hp_unwind_request), which reloads or forgets it.
 * An exit can wait for the next tick; an exec is a new program to snapshot.
 */
static __always_inline void hp_unwind_forget(__u32 tgid, __u8 request)
{
	if (!unwind_tables || !hp_targeted(tgid))
		return;
	bpf_map_delete_elem(&unwind_procs, &tgid);
	bpf_map_delete_elem(&py_procs, &tgid);
	bpf_map_update_elem(&unwind_refresh, &tgid, &request, BPF_ANY);
	bpf_map_delete_elem(&unwind_announced, &tgid);
	if (request == HP_UNWIND_REQ_EXEC)
		hp_proc_event(tgid, request);
}

/*
 * The mapping of the walk's last frame, where its caller often is too: tried before the search.
 * Per CPU, not in the walk's stack frame: a value there that changes from one step to the next and
 * indexes an array made the verifier follow each value apart (the off-CPU program passed its 1M
 * instructions); what it reads from a map it takes as any value, once. A stale or foreign hint
 * (another walk on this CPU) costs only the search.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_hint SEC(".maps");

/* The key of unwind_hint's and unwind_window's one entry, in read-only data rather than on the
 * walk's stack. */
const volatile __u32 unwind_hint_key = 0;

/*
 * The bytes of the user stack at and above the last address the bpf_loop walker read, up to
 * HP_STACK_WINDOW of them and never past that address's page. A probe-read costs nearly the same
 * for 8 bytes or 2 KiB (~75 and ~95 ns on this VM, most of a frame's walk), and callers' frames
 * lie right above their callees': one read serves the return addresses and saved frame pointers
 * of several frames.
 * The thread is stopped while it is walked, so what the window holds is what the stack holds.
 * Reset at each walk's start; a walk nested on this CPU (a program interrupting another) may
 * refill it, with the same task's stack, and every read checks the window's bounds.
 */
#define HP_STACK_WINDOW 2048
_Static_assert((HP_STACK_WINDOW & (HP_STACK_WINDOW - 1)) == 0,
	       "hp_stack_read() masks offsets with HP_STACK_WINDOW - 8");

struct hp_stack_window {
	__u64 base; /* the address of buf[0], 8-aligned */
	__u32 len;  /* bytes held; 0 when empty */
	__u32 pad;
	/* the 8 bytes past the window keep the second word of a masked offset's read in bounds */
	__u8 buf[HP_STACK_WINDOW + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_stack_window);
} unwind_window SEC(".maps");

/* The stack being walked on this CPU: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hp_user_stack);
} unwind_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HP_UNWIND_STOP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stops SEC(".maps");

/* Unwound user stacks of one buffer set, keyed by a hash of their PCs. */
#define HP_USTACKS_MAP(name)                                                                       \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                              \
		__uint(max_entries, 16384);                                                        \
		__type(key, __u64);                                                                \
		__type(value, struct hp_user_stack);                                               \
	} name SEC(".maps")

/*
 * The registers a walk needs; lr only on arm64 (the link register of the interrupted frame). fp
 * and lr are adjacent, like a saved frame pointer and return address in a frame record (both
 * architectures): one read takes both (hp_read_fp_ra()).
 */
struct hp_uregs {
	__u64 pc;
	__u64 sp;
	__u64 fp;
	__u64 lr;
};

_Static_assert(__builtin_offsetof(struct hp_uregs, lr) ==
		       __builtin_offsetof(struct hp_uregs, fp) + 8,
	       "fp and lr are read together");

struct hp_walk {
	struct hp_uregs r;
	struct hp_unwind_proc *proc; /* NULL: no table for this process, frame pointers only */
	struct hp_stack_window *win; /* NULL: each read is a probe-read (the tail-call walker) */
	__u64 *pcs;		     /* HP_UNWIND_MAX_DEPTH entries */
	__u64 hash;		     /* of the PCs so far */
	__u32 tgid;
	__u32 nr;
	__u32 stop;    /* enum hp_unwind_stop */
	bool exact_pc; /* r.pc is where the frame was interrupted, not a return address */
	bool done;
	bool asked; /* a refresh of this process was requested during this walk */
	/* r.fp is where the frame's fp was saved, not its value: read only when a step needs it
	 * (hp_fp_value()). Most frames save fp away from the return address, and most callers find
	 * their CFA from SP: a read saved on each of those frames. */
	bool fp_saved;
};

/*
 * The registers of the interrupted user context: from a perf event's context, or from the saved
 * ones bpf_task_pt_regs() gave (Linux 5.15+). Both are pointers the verifier knows the type of,
 * so plain loads rather than a probe-read helper call each (~40 ns apiece on the scheduler
 * programs' hot path).
 */
static __always_inline void hp_uregs_from_saved(struct pt_regs *regs, struct hp_uregs *r)
{
	r->pc = PT_REGS_IP(regs);
	r->sp = PT_REGS_SP(regs);
	r->fp = PT_REGS_FP(regs);
#if defined(__TARGET_ARCH_arm64)
	r->lr = PT_REGS_RET(regs);
#else
	r->lr = 0;
#endif
}

/*
 * The two binary searches run as bpf_loop() callbacks too: as plain bounded loops inside the
 * frame callback, the verifier would explore every path through them and give up.
 */
struct hp_map_search {
	struct hp_unwind_proc *proc;
	__u64 pc;
	/* 16 bits: HP_UNWIND_MAX_MAPPINGS is 256, and the walk's stack is counted to the byte (see
	 * hp_py_step()) */
	__u16 lo;
	__u16 hi;
	__s16 found; /* index into proc->maps, or -1 */
};

static long hp_map_search_step(__u64 index, void *ctx)
{
	struct hp_map_search *q = ctx;
	struct hp_unwind_mapping *m;
	__u32 mid;

	if (q->lo >= q->hi || !q->proc)
		return 1;
	mid = (q->lo + q->hi) / 2;
	m = &q->proc->maps[mid & (HP_UNWIND_MAX_MAPPINGS - 1)];
	if (q->pc < m->start) {
		q->hi = mid;
	} else if (q->pc >= m->end) {
		q->lo = mid + 1;
	} else {
		q->found = mid & (HP_UNWIND_MAX_MAPPINGS - 1);
		return 1;
	}
	return 0;
}

/* The mapping of pc in proc, tried first at the hint (see unwind_hint) by the bpf_loop walker;
 * plain_loops: see hp_unwind_frame(). */
static __always_inline struct hp_unwind_mapping *hp_find_mapping(struct hp_unwind_proc *proc,
								 __u64 pc, bool plain_loops)
{
	struct hp_map_search q = {.proc = proc, .pc = pc, .found = -1};
	/* Not in the tail-call walker: several frames per program, and the hint's branches in
	 * each made more paths than the verifier follows. */
	__u32 *hint = plain_loops
			      ? NULL
			      : bpf_map_lookup_elem(&unwind_hint, (const void *)&unwind_hint_key);
	struct hp_unwind_mapping *m;

	if (hint && *hint < proc->nr) {
		m = &proc->maps[*hint & (HP_UNWIND_MAX_MAPPINGS - 1)];
		if (pc >= m->start && pc < m->end)
			return m;
	}
	q.hi = proc->nr > HP_UNWIND_MAX_MAPPINGS ? HP_UNWIND_MAX_MAPPINGS : proc->nr;
	/* log2(HP_UNWIND_MAX_MAPPINGS) + 1 halvings find any mapping. */
	if (plain_loops) {
		for (int i = 0; i < 9; i++)
			if (hp_map_search_step(i, &q))
				break;
	} else {
		bpf_loop(9, hp_map_search_step, &q, 0);
	}
	if (q.found < 0)
		return NULL;
	if (hint)
		*hint = q.found;
	return &proc->maps[q.found & (HP_UNWIND_MAX_MAPPINGS - 1)];
}

struct hp_row_search {
	__u32 base;
	__u32 addr;
	__u32 lo;
	__u32 hi;
	/* the key of a row's lookup: here rather than on the stack of hp_row_position(), where
	 * the halvings are inlined and every byte counts (see there) */
	__u32 key;
};

/* One halving of a row search; 1 when it is over. */
static __always_inline long hp_row_halve(struct hp_row_search *q)
{
	struct hp_unwind_row *row;
	__u32 mid;

	if (q->lo >= q->hi)
		return 1;
	mid = (q->lo + q->hi) / 2;
	q->key = q->base + mid;
	row = bpf_map_lookup_elem(&unwind_rows, &q->key);
	if (!row) { /* beyond the map: the table is not what the mapping says */
		q->lo = 0;
		return 1;
	}
	if (row->pc <= q->addr)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

static long hp_row_search_step(__u64 index, void *ctx)
{
	return hp_row_halve(ctx);
}

/* Bucket k of the index whose buckets start at slot first (struct hp_unwind_index); -1 when the
 * slot is beyond the map. key: where the lookup's key goes (a field of the caller's search, which
 * is done with it: the walk's calls count their stacks together, see hp_row_position()). */
static __always_inline __s64 hp_index_bucket(__u32 *key, __u32 first, __u32 k)
{
	__u32 *b;

	*key = first + k / HP_UNWIND_INDEX_PER_SLOT;
	b = bpf_map_lookup_elem(&unwind_rows, key);
	return b ? b[k & (HP_UNWIND_INDEX_PER_SLOT - 1)] : -1;
}

/*
 * Where the row in force at addr is among count rows from base, for the bpf_loop walker: its
 * position + 1, or 0 below the first row (or when the table is not what the mapping says). The
 * index after the rows (struct hp_unwind_index) gives the few rows of addr's bucket to search.
 * A global function: the verifier checks it once, whatever the walk's state, and its stack is not
 * the walk step's (Linux 6.1 counts the step, its calls and the walk's program together against
 * 512 bytes).
 */
__noinline __u32 hp_row_position(__u32 base, __u32 count, __u32 addr)
{
	struct hp_row_search q = {.base = base, .addr = addr, .lo = base + count};
	struct hp_unwind_index *head;
	__u32 first = base + count + 1, k, last;
	__s64 lo, hi;

	head = bpf_map_lookup_elem(&unwind_rows, &q.lo);
	if (!head || addr < head->first_pc || !head->buckets)
		return 0;
	k = (addr - head->first_pc) >> (head->shift & 31);
	last = head->buckets - 1;
	if (k >= last) {
		lo = hp_index_bucket(&q.lo, first, last);
		hi = count;
	} else {
		lo = hp_index_bucket(&q.lo, first, k);
		hi = hp_index_bucket(&q.hi, first, k + 1) + 1;
	}
	if (lo < 0 || hi <= lo || hi > count)
		return 0;
	q.lo = lo;
	q.hi = hi;
	/* Most buckets hold a few rows: their first three halvings run here, where a bpf_loop()
	 * call and its callbacks cost more than the search (Python depth 20: 2.9 -> 2.7 us). 24
	 * halvings cover 16M rows, more than the rows map may hold. */
	if (!hp_row_halve(&q) && !hp_row_halve(&q) && !hp_row_halve(&q))
		bpf_loop(24, hp_row_search_step, &q, 0);
	return q.lo; /* never above hi, which is at most count */
}

/*
 * The last row at or below addr among count rows from base; NULL below the first row. The
 * tail-call walker searches all the rows without the index: its programs take several frames
 * each, and the index's branches in each made more paths than the verifier follows.
 */
static __always_inline struct hp_unwind_row *hp_find_row(__u32 base, __u32 count, __u32 addr,
							 bool plain_loops)
{
	struct hp_row_search q = {.base = base, .addr = addr, .hi = count};
	__u32 pos;

	if (plain_loops) {
		for (int i = 0; i < 24; i++)
			if (hp_row_search_step(i, &q))
				break;
		pos = q.lo <= count ? q.lo : 0;
	} else {
		pos = hp_row_position(base, count, addr);
	}
	if (!pos)
		return NULL;
	pos += base - 1;
	return bpf_map_lookup_elem(&unwind_rows, &pos);
}

/*
 * A return address as the caller's PC: on arm64, saved return addresses may carry a pointer
 * authentication code in their upper bits (48-bit user addresses, the kernel's default), which
 * the walker strips; the PC is unchanged elsewhere.
 */
static __always_inline __u64 hp_return_pc(__u64 ra)
{
#if defined(__TARGET_ARCH_arm64)
	return ra & ((1ULL << 48) - 1);
#else
	return ra;
#endif
}

/* Could this be a user-space code address? User space ends below 2^56 even with 5-level paging
 * (x86_64 LA57) or 52-bit VAs (arm64); a "return address" above it is a bad read, not a frame. */
static __always_inline bool hp_user_pc(__u64 pc)
{
	return pc >= 4096 && pc < (1ULL << 56);
}

static __always_inline bool hp_read_u64(__u64 addr, __u64 *out)
{
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr) == 0;
}

/*
 * n (8 or 16) bytes of the stack at addr into out, from the walk's window (refilled from addr when
 * it does not hold them), or with a read of their own when the walk has no window or addr is not
 * 8-aligned. The refill stops at addr's page: a probe-read that crosses into a page that is not
 * there fails, and a failing read costs microseconds.
 */
static __always_inline bool hp_stack_read(struct hp_walk *w, __u64 addr, void *out, __u32 n)
{
	struct hp_stack_window *win = w->win;
	__u64 off, len;

	if (!win || (addr & 7))
		return bpf_probe_read_user(out, n, (const void *)addr) == 0;
	off = addr - win->base;
	if (addr < win->base || off + n > win->len) {
		len = 4096 - (addr & 4095);
		if (len > HP_STACK_WINDOW)
			len = HP_STACK_WINDOW;
		if (len < n)
			return bpf_probe_read_user(out, n, (const void *)addr) == 0;
		win->len = 0;
		if (bpf_probe_read_user(win->buf, len, (const void *)addr))
			return false;
		win->base = addr;
		win->len = len;
		off = 0;
	}
	off &= HP_STACK_WINDOW - 8;
	((__u64 *)out)[0] = *(__u64 *)(win->buf + off);
	if (n > 8)
		((__u64 *)out)[1] = *(__u64 *)(win->buf + off + 8);
	return true;
}

/*
 * A signal trampoline's frame holds the interrupted registers in the ucontext on the stack
 * (x86_64: rt_sigframe after the return address has been popped, so SP points at the ucontext;
 * uc_mcontext is at 40, and rbp, rsp and rip are its 11th, 16th and 17th slots. arm64: the
 * siginfo (128 bytes) comes first, uc_mcontext is at 176 in the ucontext, and regs[] start 8
 * bytes into it).
 */
static __always_inline bool hp_signal_step(struct hp_walk *w)
{
#if defined(__TARGET_ARCH_arm64)
	__u64 mc = w->r.sp + 128 + 176 + 8;

	return hp_read_u64(mc + 29 * 8, &w->r.fp) && hp_read_u64(mc + 30 * 8, &w->r.lr) &&
	       hp_read_u64(mc + 32 * 8, &w->r.pc) && hp_read_u64(mc + 31 * 8, &w->r.sp);
#else
	__u64 mc = w->r.sp + 40;

	return hp_read_u64(mc + 10 * 8, &w->r.fp) && hp_read_u64(mc + 16 * 8, &w->r.pc) &&
	       hp_read_u64(mc + 15 * 8, &w->r.sp);
#endif
}

/*
 * The caller's fp saved at addr and its return address right after it, into r.fp and r.lr with
 * one read: a probe-read costs ~55 ns whatever its size, two thirds of a frame's walk.
 */
static __always_inline bool hp_read_fp_ra(struct hp_walk *w, __u64 addr)
{
	return hp_stack_read(w, addr, &w->r.fp, 2 * sizeof(__u64));
}

/* The frame's fp value, read from where it was saved if it was not read yet (see fp_saved). */
static __always_inline bool hp_fp_value(struct hp_walk *w)
{
	if (!w->fp_saved)
		return true;
	w->fp_saved = false;
	return hp_stack_read(w, w->r.fp, &w->r.fp, sizeof(__u64));
}

/* A frame-pointer step: [fp] is the caller's fp and [fp + 8] the return address. */
static __always_inline bool hp_fp_step(struct hp_walk *w)
{
	__u64 fp = w->r.fp;

	if (!fp || fp < w->r.sp || !hp_read_fp_ra(w, fp))
		return false;
	w->r.pc = hp_return_pc(w->r.lr);
	w->r.sp = fp + 16;
	w->r.lr = 0;
	return true;
}

/* Ask userspace for the process's tables (see unwind_refresh), once per walk. */
static __always_inline void hp_ask_refresh(__u32 tgid)
{
	__u8 load = HP_UNWIND_REQ_LOAD;

	/* NOEXIST: never overwrites an exec or exit request not taken yet. */
	bpf_map_update_elem(&unwind_refresh, &tgid, &load, BPF_NOEXIST);
	hp_announce(tgid);
}

/*
 * The same as a call of its own, for the bpf_loop walker: its stack (the request, the announce
 * record) is then not part of every step's. Linux 6.1 counts the stacks of the walk's program,
 * its step and the step's calls together against 512 bytes (hp_py_step() is the third), and the
 * step's own had to shrink for the Python walk to fit. The tail-call walker keeps it inline:
 * arm64 mixes tail calls with BPF-to-BPF calls only from Linux 6.0.
 */
static __noinline void hp_ask_refresh_apart(__u32 tgid)
{
	hp_ask_refresh(tgid);
}

/* One frame into the stack and its hash. */
static __always_inline void hp_push(struct hp_walk *w, __u64 pc)
{
	w->pcs[w->nr & (HP_UNWIND_MAX_DEPTH - 1)] = pc;
	w->hash = (w->hash ^ pc) * 0x100000001b3ULL;
	w->nr++;
}

/* Without tables for the process every step was a frame-pointer guess: however it ended, the
 * reason is that the process was not loaded yet. */
static __always_inline void hp_stop(struct hp_walk *w, __u32 reason)
{
	w->stop = w->proc || reason == HP_UNWIND_STOP_DEPTH ? reason : HP_UNWIND_STOP_NO_PROCESS;
	w->done = true;
}

/*
 * One frame: record the PC, then step to the caller. Returns 1 to end the walk. plain_loops (a
 * constant) runs the binary searches as bounded loops instead of bpf_loop(): the tail-call walker
 * runs where the kernel has no bpf_loop, and its programs take few enough frames each for the
 * verifier to follow the loops.
 */
static __always_inline long hp_unwind_frame(struct hp_walk *w, bool plain_loops)
{
	struct hp_unwind_mapping *m = NULL;
	struct hp_unwind_row *row = NULL;
	__u64 cfa, ra = 0, addr, prev_sp = w->r.sp;
	__u32 rule = HP_CFA_NONE;
	int action;
	bool ra_in_lr = false;

	if (w->nr >= unwind_depth || w->nr >= HP_UNWIND_MAX_DEPTH) {
		hp_stop(w, HP_UNWIND_STOP_DEPTH);
		return 1;
	}
	action = plain_loops ? HP_PY_KEEP_NATIVE : hp_py_step(w->r.pc);
	if (action == HP_PY_PUSH) {
		hp_push(w, hp_py_out());
		return 0;
	}
	if (action == HP_PY_ENTERED)
		return 0; /* its Python frames first (the next steps), then its native caller */
	/* HP_PY_LOOP_DONE: the registers are still the loop's native frame's, which its Python
	 * frames replaced: step from it to its caller without recording it. */
	if (action == HP_PY_KEEP_NATIVE)
		hp_push(w, w->r.pc);

	if (w->proc)
		m = hp_find_mapping(w->proc, w->r.pc, plain_loops);
	if (!m && !w->asked) {
		w->asked = true;
		if (plain_loops)
			hp_ask_refresh(w->tgid);
		else
			hp_ask_refresh_apart(w->tgid);
	}
	if (m && m->row_count) {
		/* A return address points after its call, perhaps into the next function: look up
		 * the call instruction's row instead. */
		addr = w->r.pc - (w->exact_pc ? 0 : 1);
		if (m->stride && m->period)
			addr = ((addr - m->start) % m->period) % m->stride;
		else
			addr -= m->bias;
		if (addr >> 32 == 0)
			row = hp_find_row(m->row_base, m->row_count, (__u32)addr, plain_loops);
	}
	if (row)
		rule = row->cfa_rule;

	w->exact_pc = false;
	switch (rule) {
	case HP_CFA_NONE:
		if (!hp_fp_value(w)) {
			hp_stop(w, HP_UNWIND_STOP_BAD_READ);
			return 1;
		}
		if (!hp_fp_step(w)) {
			hp_stop(w, w->r.fp ? HP_UNWIND_STOP_BAD_READ : HP_UNWIND_STOP_NO_TABLE);
			return 1;
		}
		break;
	case HP_CFA_END:
		hp_stop(w, HP_UNWIND_STOP_END);
		return 1;
	case HP_CFA_SIGNAL:
		if (!hp_signal_step(w)) {
			hp_stop(w, HP_UNWIND_STOP_BAD_READ);
			return 1;
		}
		w->exact_pc = true;
		w->fp_saved = false;
		return 0;
	case HP_CFA_SP:
	case HP_CFA_FP:
	case HP_CFA_PLT:
		if (!row) /* cannot happen; keeps the verifier sure of row below */
			return 1;
		if (rule == HP_CFA_FP && !hp_fp_value(w)) {
			hp_stop(w, HP_UNWIND_STOP_BAD_READ);
			return 1;
		}
		cfa = (rule == HP_CFA_FP ? w->r.fp : w->r.sp) + (__s64)row->cfa_offset;
		if (rule == HP_CFA_PLT && (w->r.pc & 15) >= 11)
			cfa += 8;
		if (row->ra_rule == HP_REG_OFFSET) {
			if (!hp_stack_read(w, cfa + (__s64)row->ra_offset, &ra, sizeof(ra))) {
				hp_stop(w, HP_UNWIND_STOP_BAD_READ);
				return 1;
			}
		} else if (row->ra_rule == HP_REG_SAME) {
			ra = w->r.lr; /* arm64 leaf: still in the link register */
			ra_in_lr = true;
		}
		if (row->fp_rule == HP_REG_OFFSET) {
			w->r.fp = cfa + (__s64)row->fp_offset;
			w->fp_saved = true;
			/* The tail-call walker reads it at once, so that fp_saved stays false (and
			 * out of the state it keeps between programs): a lazy fp's branches in each
			 * of its frames made more paths than the verifier follows. */
			if (plain_loops && !hp_fp_value(w)) {
				hp_stop(w, HP_UNWIND_STOP_BAD_READ);
				return 1;
			}
		} else if (row->fp_rule == HP_REG_UNDEFINED) {
			w->r.fp = 0;
			w->fp_saved = false;
		}
		w->r.pc = hp_return_pc(ra);
		w->r.sp = cfa;
		w->r.lr = 0;
		break;
	default:
		hp_stop(w, HP_UNWIND_STOP_UNSUPPORTED);
		return 1;
	}
	/* The caller's frame lies above ours (or at it, for an arm64 leaf that has not touched
	 * the stack and returns through the link register), and its PC is a user address:
	 * anything else is a corrupt stack, a loop, or a frame-pointer step through code that
	 * has none. */
	if (!hp_user_pc(w->r.pc) || w->r.sp < prev_sp || (w->r.sp == prev_sp && !ra_in_lr)) {
		hp_stop(w, w->r.pc ? HP_UNWIND_STOP_BAD_READ : HP_UNWIND_STOP_END);
		return 1;
	}
	return 0;
}

/* The bpf_loop callback of the walk: one frame. */
static long hp_unwind_step(__u64 index, void *ctx)
{
	return hp_unwind_frame(ctx, false);
}

/* One frame of the tail-call walker, which must not need bpf_loop. */
static long hp_unwind_step_plain(struct hp_walk *w)
{
	return hp_unwind_frame(w, true);
}

/* Count why the walk ended, and finish its hash (never 0: 0 means "no walked stack"). */
static __always_inline __u64 hp_walk_end(struct hp_walk *w)
{
	if (!w->done)
		w->stop = HP_UNWIND_STOP_DEPTH;
	bump(&unwind_stops, w->stop);
	w->hash ^= (w->hash >> 29) ^ w->nr;
	return w->hash ? w->hash : 1;
}

static __always_inline void hp_walk_begin(struct hp_walk *w, __u32 tgid, const struct hp_uregs *r,
					  __u64 *pcs)
{
	*w = (struct hp_walk){
		.r = *r, .pcs = pcs, .tgid = tgid, .exact_pc = true, .hash = 0xcbf29ce484222325ULL};
	w->proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
}

/*
 * Walk the user stack of the current process (tgid) from r into pcs (HP_UNWIND_MAX_DEPTH
 * entries, leaf first). Returns the number of frames. Counts why the walk ended.
 */
static __always_inline __u32 hp_unwind_user(__u32 tgid, const struct hp_uregs *r, __u64 *pcs,
					    __u64 *hash)
{
	struct hp_walk w;

	*hash = 0;
	if (!r->pc)
		return 0;
	hp_walk_begin(&w, tgid, r, pcs);
	w.win = bpf_map_lookup_elem(&unwind_window, (const __u32 *)&unwind_hint_key);
	if (w.win)
		w.win->len = 0;
	hp_py_begin(tgid);
	/* Steps that put no frame in (the end of a Python loop's frames) count against the depth
	 * only here, hence twice the frames. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop))
		bpf_loop(2 * HP_UNWIND_MAX_DEPTH + 1, hp_unwind_step, &w, 0);
	*hash = hp_walk_end(&w);
	return w.nr;
}

/*
 * Kernels without bpf_loop: the walk goes on across tail calls, HP_TAIL_STEPS frames per program
 * (the verifier checks each step of the loop, so it stays short), at most MAX_TAIL_CALL_CNT (33)
 * programs: 4 frames each cover the default depth of 128. What a walk needs between two programs
 * is kept in per-CPU memory, since a program's stack does not survive a tail call; the pointers
 * into maps are looked up again by each program. Samples are taken with preemption off, so the
 * CPU's slot belongs to one walk at a time.
 */
#define HP_TAIL_STEPS 4

struct hp_walk_saved {
	struct hp_uregs r;
	__u64 hash;
	__u32 tgid;
	__u32 nr;
	__u32 stop;
	bool exact_pc;
	bool done;
	bool asked;
};

static __always_inline void hp_walk_save(const struct hp_walk *w, struct hp_walk_saved *s)
{
	s->r = w->r;
	s->hash = w->hash;
	s->tgid = w->tgid;
	s->nr = w->nr;
	s->stop = w->stop;
	s->exact_pc = w->exact_pc;
	s->done = w->done;
	s->asked = w->asked;
}

/* Resume a saved walk into this CPU's scratch stack; false when the scratch is missing. */
static __always_inline bool hp_walk_resume(struct hp_walk *w, const struct hp_walk_saved *s,
					   struct hp_user_stack **stack)
{
	__u32 zero = 0;

	*stack = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!*stack)
		return false;
	*w = (struct hp_walk){.r = s->r,
			      .pcs = (*stack)->pcs,
			      .hash = s->hash,
			      .tgid = s->tgid,
			      .nr = s->nr,
			      .stop = s->stop,
			      .exact_pc = s->exact_pc,
			      .done = s->done,
			      .asked = s->asked};
	w->proc = bpf_map_lookup_elem(&unwind_procs, &w->tgid);
	return true;
}

/* Up to HP_TAIL_STEPS frames; true when the walk is over. */
static __always_inline bool hp_walk_steps(struct hp_walk *w)
{
	for (int i = 0; i < HP_TAIL_STEPS; i++) {
		if (w->done || hp_unwind_step_plain(w))
			return true;
	}
	return w->done;
}

/*
 * Walk into this CPU's scratch stack. Returns it with its hash in *hash, or NULL when there was no
 * stack (counted as HP_LOSS_USER_STACK_MISSING). The caller stores it with hp_store_user_stack():
 * the walk comes before the choice of buffer, so that it is verified once.
 */
static __always_inline struct hp_user_stack *hp_walk_user(__u32 tgid, const struct hp_uregs *r,
							  __u64 *hash)
{
	struct hp_user_stack *s;
	__u32 zero = 0;

	*hash = 0;
	s = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!s)
		return NULL;
	s->nr = hp_unwind_user(tgid, r, s->pcs, hash);
	if (!s->nr) {
		bump(&losses, HP_LOSS_USER_STACK_MISSING);
		return NULL;
	}
	return s;
}

/* Keep a walked stack in ustacks under its hash; false (counted as loss_full) when full. */
static __always_inline bool hp_store_user_stack(void *ustacks, __u64 hash,
						const struct hp_user_stack *s, __u32 loss_full)
{
	int err;

	/* Most samples repeat a stack already kept: a lookup takes no lock, and an update that
	 * finds the key takes the bucket's lock to say so. */
	if (bpf_map_lookup_elem(ustacks, &hash))
		return true;
	err = hp_map_update(ustacks, &hash, s, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		hp_count_update_error(err, loss_full);
		return false;
	}
	return true;
}

#endif /* HOSTPROF_UNWIND_BPF_H */
