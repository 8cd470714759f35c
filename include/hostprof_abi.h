/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by bpf/ and src/: map keys and values, limits and loss-counter indices.
 * Every struct has explicit padding and a size assertion, so the two sides can never disagree.
 */
#ifndef HOSTPROF_ABI_H
#define HOSTPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HP_COMM_LEN 16
/* The kernel's own cap for bpf_get_stackid() is sysctl kernel.perf_event_max_stack (127). */
#define HP_MAX_STACK_DEPTH 127

/* The counts and stacks maps are double-buffered: BPF writes into set `active`, userspace drains
 * the other one and clears it. Flipping the index lets a drain run without losing a sample. */
#define HP_NR_BUFFERS 2

/* Key of the in-kernel aggregation: one entry per {process, thread, user stack, kernel stack}. */
struct hp_sample_key {
	__u32 pid;	       /* tgid: the process */
	__u32 tid;	       /* the thread */
	__s32 user_stack_id;   /* < 0: no user stack (kernel thread, or lost: see hp_loss) */
	__s32 kern_stack_id;   /* < 0: sample taken in user mode, or lost */
	__u64 user_stack_hash; /* != 0: the user stack was walked with the unwind tables and is in
				* the ustacks map of the same buffer under this key; user_stack_id
				* is then -1 */
	__u64 thread_ctx;      /* != 0: the thread's OpenTelemetry context record (OTEP 4947) is in
				* the tctx map of the same buffer under this key */
};

struct hp_sample_value {
	__u64 count;
	char thread_name[HP_COMM_LEN];	/* task->comm of the thread */
	char process_name[HP_COMM_LEN]; /* task->group_leader->comm */
};

/* Why a sample was not recorded, or was recorded with less than it should have. Indices into the
 * per-CPU `losses` array. */
enum hp_loss {
	HP_LOSS_USER_STACK_MAP_FULL = 0, /* bpf_get_stackid(user) returned -ENOMEM */
	HP_LOSS_USER_STACK_COLLISION,	 /* -EEXIST: hash bucket holds another stack */
	HP_LOSS_USER_STACK_MISSING, /* -EFAULT or other: a user task whose stack could not be read
				     */
	HP_LOSS_KERN_STACK_MAP_FULL,
	HP_LOSS_KERN_STACK_COLLISION,
	HP_LOSS_KERN_STACK_MISSING,
	HP_LOSS_COUNTS_MAP_FULL,   /* the aggregation map had no room: the whole sample is lost */
	HP_LOSS_OFFCPU_START_FULL, /* no room to remember a thread's switch-out: its wait is lost */
	HP_LOSS_OFFCPU_COUNTS_FULL, /* an off-CPU wait had no room in the aggregation: lost */
	HP_LOSS_OFFCPU_STACKS_FULL, /* the stack of an off-CPU wait had no room: kept without it */
	HP_LOSS_LOCK_START_FULL,  /* no room to remember a thread's wait begin: the wait is lost */
	HP_LOSS_LOCK_COUNTS_FULL, /* a lock wait had no room in the aggregation: lost */
	/* A map update that failed for another reason than a full map, counted instead of the
	 * *_FULL above: what it would have stored is lost the same way. */
	HP_LOSS_MAP_NO_MEMORY, /* -ENOMEM: the kernel had no element at hand (maps not preallocated
				  allocate in interrupt context, and may find none) */
	HP_LOSS_MAP_UPDATE_FAILED, /* any other error (-EBUSY: the bucket was locked on this CPU) */
	HP_LOSS_FOLLOW_FULL, /* a process a target started was not followed: target_pids was full */
	HP_LOSS_THREAD_CTX_FULL, /* a thread context record had no room: the sample kept without */
	HP_LOSS__COUNT,
};

/* Indices into the per-CPU `stats` array. */
enum hp_stat {
	HP_STAT_SAMPLES_SEEN = 0, /* every perf event that passed the filter */
	HP_STAT_SAMPLES_RECORDED, /* of those, added to a counts map */
	HP_STAT_OFFCPU_EVENTS,	  /* off-CPU waits of interest that ended (switch-ins) */
	HP_STAT_LOCK_EVENTS,	  /* lock waits of interest that ended */
	/* Stacks taken (off-CPU: at switch-out, by chance for a thread whose waits are short; a
	 * lock wait: at its end, if kept), the waits kept by sampling (shorter than the sampling
	 * period) and the short waits not kept. */
	HP_STAT_OFFCPU_WALKED,
	HP_STAT_OFFCPU_SAMPLED,
	HP_STAT_OFFCPU_SKIPPED,
	/* Off-CPU waits longer than the period whose switch-out was not walked, by chance (see
	 * struct hp_offcpu_start): kept exactly, with their kernel stack only. */
	HP_STAT_OFFCPU_UNWALKED_LONG,
	/* The same waits walked instead when their thread returned to user mode (Linux 6.18's
	 * task work), with user stack and thread context; counted in HP_STAT_OFFCPU_WALKED too. */
	HP_STAT_OFFCPU_WALKED_AT_RETURN,
	HP_STAT_LOCK_WALKED,
	HP_STAT_LOCK_SAMPLED,
	HP_STAT_LOCK_SKIPPED,
	/* Events of processes in the drop filter, skipped before any other work (every program). */
	HP_STAT_FILTER_DROPPED,
	/* Threads already off the CPU when the capture began, their waits counted from then
	 * (hp_offcpu_seed, the programs with task storage). */
	HP_STAT_OFFCPU_SEEDED,
	HP_STAT__COUNT,
};

/*
 * The drop filter (bpf/common.bpf.h): processes that relabel rules leave out, by tgid (drop_pids)
 * or by cgroup v2 id (drop_cgroups), which every program skips first. drop_active, in each
 * object's .bss, says which of the maps userspace has filled, so that an empty filter costs a
 * load and no lookup.
 */
enum hp_drop_filter {
	HP_DROP_PIDS = 1,
	HP_DROP_CGROUPS = 2,
};
#define HP_DROP_PIDS_ENTRIES 16384
#define HP_DROP_CGROUPS_ENTRIES 4096

/*
 * Off-CPU. A stack is taken when a thread leaves the CPU, but its off-CPU time is only known when
 * it runs again, perhaps after userspace has drained and cleared the stack maps. So the stack is
 * kept as raw addresses with the thread's switch-out record, and aggregated at switch-in under a
 * hash of those addresses, with a copy of the stack in a double-buffered map keyed by that hash.
 */
#define HP_OFFCPU_USER_DEPTH 128 /* = HP_UNWIND_MAX_DEPTH: the walker fills it */
#define HP_OFFCPU_KERN_DEPTH 32

/* Why a thread left the CPU, from its state at switch-out (the thread.state label). */
enum hp_thread_state {
	HP_STATE_PREEMPTED = 0, /* still runnable: preempted or yielded */
	HP_STATE_SLEEPING,	/* TASK_INTERRUPTIBLE: waiting for an event, a timer, a lock */
	HP_STATE_IO,		/* TASK_UNINTERRUPTIBLE in iowait: disk and similar I/O */
	HP_STATE_BLOCKED,	/* TASK_UNINTERRUPTIBLE otherwise: kernel locks, page faults */
	HP_STATE_OTHER,		/* stopped, traced, dead, ... */
	HP_STATE_LOCK, /* sleeping in a mutex-style futex wait (bpf/futex.bpf.h): a user-space lock
			*/
	HP_STATE__COUNT,
};

struct hp_raw_stack {
	__u32 nr_user;
	__u32 nr_kern;
	__u64 user[HP_OFFCPU_USER_DEPTH]; /* leaf first */
	__u64 kern[HP_OFFCPU_KERN_DEPTH]; /* leaf first */
};

/*
 * Per thread, while it is off the CPU. Its stacks are those it left with, and are taken at
 * switch-out, while the thread is current; its wait's length is known at switch-in. A wait shorter
 * than the sampling period is kept with probability length / period and counted as one period
 * (unbiased: each kept wait stands for period / length waits like it), a longer one always,
 * exactly.
 *
 * A thread whose recent waits were short has its switch-out walked only with probability guess /
 * period, guess being the longest of them, halved at each wait since (recent_ns; at least a 256th
 * of the period), so that one short wait among long ones does not make the next one's weight
 * large. At switch-in, a walked short wait is kept with probability length / guess (at most 1)
 * and weighted by period / guess on top of the usual, so that each wait is kept with probability
 * min(length, guess) / period and stands for period / min(length, guess) like it.
 *
 * Where its user stack can be read when it returns to user mode (Linux 6.18's task work:
 * await_return, HP_STAT_OFFCPU_WALKED_AT_RETURN), a wait longer than its guess is kept with
 * probability length / period instead, walked or not, and stands for one period: weighted by
 * period / guess, the few walks that stood for a loaded host's run-queue delays made its totals
 * swing by a quarter. A wait that proves long is kept exactly either way. A kept wait that was
 * not walked has its kernel stack taken at switch-in, and its user stack and thread context read
 * at that return, or none (HP_STAT_OFFCPU_UNWALKED_LONG). A thread whose recent waits were long is
 * walked at every switch-out, so that a wait still going on when the capture ends has its stacks.
 */
struct hp_offcpu_start {
	__u64 ts;	   /* the switch's clock at switch-out; 0 when the thread is on a CPU */
	__u32 state;	   /* enum hp_thread_state */
	__u8 unwalked;	   /* its walk left out by chance (see above) */
	__u8 await_return; /* kept, unwalked: its user stack read at its return to user mode */
	__u8 lock_check;   /* sleeping, maybe on a user-space lock: classify() when it is kept */
	/* With the contention profile's futex waits taken at the switches (bpf/offcpu.bpf.c
	 * futex_waits): the enum hp_wait_kind of the futex wait it sleeps in and the futex's
	 * address, HP_WAIT__COUNT when it is not one (or not settled yet). */
	__u8 futex_kind;
	__u64 futex_addr;
	__u64 guess_ns;	  /* walk decided by chance, probability guess_ns / period; 0: surely */
	__u64 thread_ctx; /* the thread's context record, in offcpu_tctx; 0: none (or not read) */
	__u64 recent_ns;  /* the longest of its recent waits, halved at each wait since */
	/* await_return: what the wait stands for, and the user registers it waited with */
	__u64 return_ns, return_n;
	__u64 return_pc, return_sp;
	struct hp_raw_stack stack;
};

/* Who a start record still waiting at the end belongs to: what hp_offcpu_pending writes before
 * the record itself, where the start records are in task storage. */
struct hp_offcpu_pending {
	__u64 now; /* the clock start records are in (the run queue's), as the iterator read it */
	__u32 pid;
	__u32 tid;
	char thread_name[HP_COMM_LEN];
	char process_name[HP_COMM_LEN];
};

struct hp_offcpu_key {
	__u32 pid;
	__u32 tid;
	__u64 stack_hash; /* key of the stack in the offcpu_stacks map of the same buffer */
	__u32 state;
	__u32 futex_kind; /* as in struct hp_offcpu_start: HP_WAIT__COUNT unless a futex wait */
	__u64 thread_ctx; /* != 0: the span the thread served when it blocked, in offcpu_tctx */
	__u64 futex_addr;
};

struct hp_offcpu_value {
	__u64 ns;    /* total off-CPU time */
	__u64 count; /* number of switch-outs (sampled short waits: the number they stand for) */
	char thread_name[HP_COMM_LEN];
	char process_name[HP_COMM_LEN];
};

/*
 * Lock contention: kernel locks (lock:contention_begin/end) and user-space waits on futexes (the
 * futex, futex_wait and futex_waitv syscalls). The wait is timed from begin (syscall entry) to end
 * (exit) in the waiter's own context, so its stacks are taken at the end, like the CPU sampler's.
 * Where the sched_switch program runs anyway (wall or off-CPU, with the bpf_loop walker), futex
 * waits are its waits instead, told by the system call they sleep in (futex_kind in struct
 * hp_offcpu_key): no program then runs at every futex call.
 */
enum hp_wait_kind {
	HP_WAIT_FUTEX = 0,     /* FUTEX_WAIT: glibc's mutex and lowlevellock slow paths */
	HP_WAIT_FUTEX_BITSET,  /* FUTEX_WAIT_BITSET: condition variables, semaphores, timed waits */
	HP_WAIT_FUTEX_LOCK_PI, /* FUTEX_LOCK_PI/PI2: priority-inheritance mutexes */
	HP_WAIT_FUTEX_REQUEUE_PI, /* FUTEX_WAIT_REQUEUE_PI: condvars over PI mutexes */
	HP_WAIT_FUTEX_WAITV,	  /* futex_waitv(2): waits on several futexes */
	HP_WAIT_FUTEX2,		  /* futex_wait(2), Linux 6.7+ */
	HP_WAIT_KERNEL_SPINLOCK,
	HP_WAIT_KERNEL_MUTEX,
	HP_WAIT_KERNEL_RWSEM_READ,
	HP_WAIT_KERNEL_RWSEM_WRITE,
	HP_WAIT_KERNEL_RWLOCK_READ,
	HP_WAIT_KERNEL_RWLOCK_WRITE,
	HP_WAIT_KERNEL_RTMUTEX,
	HP_WAIT_KERNEL_PERCPU_RWSEM,
	HP_WAIT_KERNEL_OTHER,
	HP_WAIT__COUNT,
};

struct hp_lock_key {
	__u32 pid;
	__u32 tid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	__u32 kind; /* enum hp_wait_kind */
	__u32 pad;
	__u64 addr;	       /* the futex's user address, or the kernel lock's */
	__u64 user_stack_hash; /* as in struct hp_sample_key */
	__u64 thread_ctx;      /* != 0: the span the waiter served, in lock_tctx */
};

struct hp_lock_value {
	__u64 ns;    /* total wait */
	__u64 count; /* contended acquisitions (waits) */
	char thread_name[HP_COMM_LEN];
	char process_name[HP_COMM_LEN];
};

/*
 * Unwind tables (.eh_frame / .debug_frame, compacted in userspace by unwind_table.c).
 *
 * A binary's table is a run of rows sorted by file address, each valid from its `pc` up to the
 * next row's. Rows of every loaded binary share one big array map; a process's executable
 * mappings say where their binary's rows start and how many there are. The BPF walker finds the
 * row of a PC by binary search and steps one frame with it:
 *   CFA = (SP or FP) + cfa_offset; RA = [CFA + ra_offset]; FP = [CFA + fp_offset] or unchanged.
 * On x86_64 the return address is always at CFA - 8 and the frame pointer is rbp; on arm64 the
 * frame pointer is x29 and the return address is x30 (the link register: a leaf function that has
 * not saved it yet has ra_rule HP_REG_SAME).
 */
#define HP_UNWIND_MAX_DEPTH 128	   /* user frames the walker follows at most */
#define HP_UNWIND_MAX_MAPPINGS 256 /* executable mappings with a table, per process */
#define HP_UNWIND_TABLE_VERSION 1  /* bump when a row's meaning changes (the disk cache key) */

enum hp_cfa_rule {
	HP_CFA_NONE = 0, /* no unwind info for this range: step with the frame pointer */
	HP_CFA_SP,	 /* CFA = SP + cfa_offset */
	HP_CFA_FP,	 /* CFA = FP + cfa_offset */
	HP_CFA_PLT,	 /* x86_64 PLT stubs: CFA = SP + cfa_offset + ((PC & 15) >= 11 ? 8 : 0) */
	HP_CFA_END,	 /* the outermost frame (return address undefined): the stack ends */
	HP_CFA_SIGNAL,	 /* a signal trampoline: the caller's registers are in the ucontext */
	HP_CFA_UNSUPPORTED, /* a DWARF expression the compact form cannot hold: stop, counted */
};

enum hp_reg_rule {
	HP_REG_SAME = 0,  /* unchanged: the caller sees the current value */
	HP_REG_OFFSET,	  /* saved at CFA + offset */
	HP_REG_UNDEFINED, /* not recoverable */
};

struct hp_unwind_row {
	__u32 pc;	  /* first file address (ELF virtual address) the row covers */
	__s32 cfa_offset; /* for HP_CFA_SP, HP_CFA_FP and HP_CFA_PLT */
	__s16 fp_offset;  /* from the CFA, when fp_rule is HP_REG_OFFSET */
	__s16 ra_offset;  /* from the CFA, when ra_rule is HP_REG_OFFSET (x86_64: -8) */
	__u8 cfa_rule;	  /* enum hp_cfa_rule */
	__u8 fp_rule;	  /* enum hp_reg_rule */
	__u8 ra_rule;	  /* enum hp_reg_rule */
	__u8 pad;
};

/*
 * In the rows map, every binary's rows are followed by an index that narrows the walker's search
 * to a few rows (a binary search over 64k rows of python3 was 17 steps of ~11 ns per frame): one
 * header slot (this struct, in the place of a row), then the buckets, four __u32 per slot. Bucket
 * k holds the position among the binary's rows of the row in force at file address
 * first_pc + (k << shift); the row of an address in bucket k lies between bucket k's and bucket
 * k + 1's. The shift keeps the index within a sixteenth of the rows' bytes
 * (src/unwind/row_index.h).
 */
struct hp_unwind_index {
	__u32 first_pc; /* the first row's pc */
	__u32 buckets;	/* at least 1 */
	__u8 shift;	/* bucket width: 1 << shift bytes of file address */
	__u8 pad[7];
};

#define HP_UNWIND_INDEX_PER_SLOT 4 /* buckets per 16-byte slot of the rows map */

/*
 * One executable mapping of a process: runtime [start, end), file address = runtime - bias. Code
 * copied from a template at run time (unwind/code_template.h) has stride != 0: its rows are the
 * template's, looked up at ((runtime - start) % period) % stride (bias is unused).
 */
struct hp_unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 row_base;	 /* index of the binary's first row in the rows map */
	__u32 row_count; /* 0: no table (frame pointers only) */
	__u32 stride;	 /* 0: a file's code; else the distance between copies of a template */
	__u32 period;	 /* with stride: the copies restart every period bytes (one arena) */
};

/* Value of the per-process map: its mappings, sorted by start, not overlapping. */
struct hp_unwind_proc {
	__u32 nr;
	__u32 pad;
	struct hp_unwind_mapping maps[HP_UNWIND_MAX_MAPPINGS];
};

/* Why the walk of a user stack ended: per-CPU counters, one per walked stack. */
enum hp_unwind_stop {
	HP_UNWIND_STOP_END = 0,	    /* the outermost frame: a clean end of stack */
	HP_UNWIND_STOP_NO_TABLE,    /* a PC without a table, and its frame pointer led nowhere */
	HP_UNWIND_STOP_DEPTH,	    /* HP_UNWIND_MAX_DEPTH or the configured depth reached */
	HP_UNWIND_STOP_BAD_READ,    /* a saved register could not be read from the stack */
	HP_UNWIND_STOP_UNSUPPORTED, /* a row the walker cannot follow (HP_CFA_UNSUPPORTED) */
	HP_UNWIND_STOP_NO_PROCESS,  /* no tables for this process yet: frame pointers only */
	HP_UNWIND_STOP__COUNT,
};

/*
 * The OpenTelemetry thread context (OTEP 4947): the TLS variable otel_thread_ctx_v1 points at a
 * record the SDK keeps for the span running on the thread. Userspace finds where the variable
 * lies for each process that publishes one (symbols/thread_ctx_ref.h) and tells BPF how to get
 * there from a thread's TLS pointer (x86_64 fsbase, arm64 tpidr_el0):
 *   HP_TLS_STATIC  variable = tp + offset (the executable's TLS, and libraries loaded at start:
 *                  static TLS, at a fixed distance from every thread's pointer)
 *   HP_TLS_DTV     variable = dtv[module].block + offset, dtv read at tp + dtv_offset (a library
 *                  loaded by dlopen: its block is allocated per thread, found in glibc's DTV)
 *   HP_TLS_GO_REG  (Go on arm64) no variable: the goroutine pointer g is in register x28 of the
 *                  thread's user context (Go keeps it in TLS only when cgo is linked in)
 *
 * The same entry tells the sampler what the variable holds (record):
 *   HP_CTX_OTEL      a pointer to the OTEP 4947 record;
 *   HP_CTX_GO_MAP    Go's g, whose m->curg->labels is the goroutine's pprof label set, a
 *                    *map[string]string (Go 1.19 to 1.23);
 *   HP_CTX_GO_SLICE  the same, a pointer to a sorted []struct{key, value string} (Go 1.24 on).
 * For Go the go_* fields are the offsets of g.m, m.curg and g.labels, per Go version
 * (symbols/go_labels_ref.h).
 */
enum hp_tls_kind {
	HP_TLS_NONE = 0,
	HP_TLS_STATIC,
	HP_TLS_DTV,
	HP_TLS_GO_REG,
};

enum hp_ctx_record {
	HP_CTX_OTEL = 0,
	HP_CTX_GO_MAP,
	HP_CTX_GO_SLICE,
};

struct hp_tls_ref {
	__u8 kind;   /* enum hp_tls_kind */
	__u8 record; /* enum hp_ctx_record */
	__u16 go_g_m;
	__u32 module; /* HP_TLS_DTV: the module's index in the DTV */
	__s64 offset;
	__s64 dtv_offset; /* HP_TLS_DTV: where the DTV pointer lies from tp (glibc: 8, arm64 0) */
	__u16 go_m_curg;
	__u16 go_g_labels;
	__u32 pad;
};

#define HP_THREAD_CTX_HEADER 28 /* trace-id, span-id, valid, trace-flags, attrs-data-size */
#define HP_THREAD_CTX_ATTRS 612 /* 640 bytes in all, the OTEP's recommended bound */

/* A thread context record as read: the OTEP's byte-packed layout, attrs cut at 612 bytes. */
struct hp_thread_ctx {
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 valid; /* 1: the record is valid; HP_THREAD_CTX_GO_LABELS: Go labels, see below */
	__u8 trace_flags;
	__u16 attrs_size; /* the bytes of attrs that hold entries {key index, length, bytes} */
	__u8 attrs[HP_THREAD_CTX_ATTRS];
};

/*
 * A goroutine's pprof labels, read by the sampler into the same record (valid =
 * HP_THREAD_CTX_GO_LABELS): labels "trace_id" (32 hex digits) and "span_id" (16) fill the ids,
 * every other label takes a slot of attrs (attrs_size = slots * HP_GO_LABEL_SLOT), its key and
 * value cut at HP_GO_LABEL_KEY and HP_GO_LABEL_VALUE bytes (the lengths say what the goroutine
 * had, so that userspace knows a cut). At most HP_GO_LABELS_READ labels are looked at.
 */
#define HP_THREAD_CTX_GO_LABELS 2
#define HP_GO_LABEL_SLOTS 8
#define HP_GO_LABEL_KEY 24
#define HP_GO_LABEL_VALUE 50
#define HP_GO_LABEL_SLOT (2 + HP_GO_LABEL_KEY + HP_GO_LABEL_VALUE)
#define HP_GO_LABELS_READ 16

struct hp_go_label {
	__u8 key_len;	/* of the goroutine's key; more than HP_GO_LABEL_KEY: cut */
	__u8 value_len; /* of its value, at most 255; more than HP_GO_LABEL_VALUE: cut */
	char key[HP_GO_LABEL_KEY];
	char value[HP_GO_LABEL_VALUE];
};

/* Values of the unwind_refresh map: what userspace should do for a process. */
enum hp_unwind_request {
	HP_UNWIND_REQ_LOAD = 1, /* a walk met code outside the loaded mappings (or no entry) */
	HP_UNWIND_REQ_EXEC,	/* it exec'd: its entry is gone, load it afresh */
	HP_UNWIND_REQ_EXIT,	/* it exited: forget it (its PID may come back as another) */
};

/*
 * A record of the unwind_events ring buffer: a process was sampled for the first time since its
 * exec (kind HP_UNWIND_REQ_LOAD), or it exec'd (HP_UNWIND_REQ_EXEC). Userspace snapshots it while
 * it lives (see src/process/proc_watch.h).
 */
struct hp_proc_event {
	__u32 tgid;
	__u32 kind; /* enum hp_unwind_request */
};

/*
 * CPython frames walked in BPF (bpf/python.bpf.h; userspace: src/interp/). When the native walk
 * meets a PC inside _PyEval_EvalFrameDefault, the Python frames that call of the evaluation loop
 * runs take its place in the stack, read from the thread's interpreter frame chain, and the native
 * walk goes on from its caller. A Python frame is one entry of pcs[] with HP_PY_FRAME set: the
 * code object's address (16-byte aligned, as CPython's allocators give) over 16, and the index
 * of the code unit the frame was running (saturated at HP_PY_INDEX_MAX). User addresses stay below
 * 2^56 (hp_user_pc()), so no native PC has the top bit.
 */
#define HP_PY_FRAME (1ULL << 63)
#define HP_PY_INDEX_SHIFT 44
#define HP_PY_INDEX_MAX ((1U << 19) - 1)
#define HP_PY_CODE_MASK ((1ULL << HP_PY_INDEX_SHIFT) - 1)
#define HP_PY_ENCODE(code, index)                                                                  \
	(HP_PY_FRAME | ((__u64)(index) << HP_PY_INDEX_SHIFT) | (((code) >> 4) & HP_PY_CODE_MASK))
#define HP_PY_CODE(pc) (((pc)&HP_PY_CODE_MASK) << 4)
#define HP_PY_INDEX(pc) ((__u32)(((pc) >> HP_PY_INDEX_SHIFT) & HP_PY_INDEX_MAX))

/* How a thread finds its PyThreadState in the interpreter's list of them. */
enum hp_py_thread_match {
	HP_PY_MATCH_TID = 0, /* tstate->native_thread_id == the thread's id (3.11 on) */
	HP_PY_MATCH_PTHREAD, /* tstate->thread_id == pthread_self() == the TLS pointer (3.10,
				x86_64) */
};

/* Where one call of the evaluation loop ends in the frame chain. */
enum hp_py_frames {
	HP_PY_FRAMES_OBJECT = 0, /* 3.10: PyFrameObject, one per call of the loop */
	HP_PY_FRAMES_IS_ENTRY,	 /* 3.11: _PyInterpreterFrame, the call's first has is_entry set */
	HP_PY_FRAMES_CSTACK,	 /* 3.12 on: the call pushed a frame owned by the C stack first */
};

#define HP_PY_NO_OFFSET 0xffff

/* The bytes of a frame the walk reads at once, which hold every field it reads (each layout's
 * offsets are checked against them, tests/unit/test_interp.c): a PyFrameObject (3.10) is 360
 * bytes or more, f_lasti ends at 100; a _PyInterpreterFrame (3.11 on) is read no further than its
 * owner byte, since a small one may end a data-stack chunk right before an unmapped page. */
#define HP_PY_FRAME_READ 104
#define HP_PY_IFRAME_READ 72
/* The bytes of a PyThreadState read at once: its links, thread id and frame in every release (a
 * thread state is 250 bytes or more). */
#define HP_PY_TSTATE_READ 192

/* Value of the py_procs map, per process (tgid): where its interpreter keeps what the walk reads.
 * Offsets are in bytes, from the structures of CPython's headers (src/interp/python_layout.c). */
struct hp_py_proc {
	__u64 runtime;	  /* runtime address of _PyRuntime */
	__u64 eval_start; /* runtime [start, end) of _PyEval_EvalFrameDefault */
	__u64 eval_end;
	__u16 version;	   /* 0x030b for 3.11 */
	__u8 thread_match; /* enum hp_py_thread_match */
	__u8 frames;	   /* enum hp_py_frames */
	__u8 owner_cstack; /* HP_PY_FRAMES_CSTACK: the owner value of the C stack's frames */
	__u8 pad[3];
	__u16 runtime_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_tstate_head;  /* PyInterpreterState's list of thread states */
	__u16 tstate_next;
	__u16 tstate_thread;  /* native_thread_id or thread_id, per thread_match */
	__u16 tstate_frame;   /* frame (3.10), cframe (3.11, 3.12), current_frame (3.13) */
	__u16 cframe_frame;   /* _PyCFrame.current_frame, or HP_PY_NO_OFFSET */
	__u16 frame_previous; /* f_back, previous */
	__u16 frame_code;     /* f_code, f_executable */
	__u16 frame_instr;    /* f_lasti (an int: the code unit's index), prev_instr, instr_ptr */
	__u16 frame_entry;    /* is_entry (3.11) or owner (3.12 on); HP_PY_NO_OFFSET for 3.10 */
	__u16 code_units;     /* PyCodeObject.co_code_adaptive (3.11 on): the first code unit */
	__u16 pad2;
};

/* A user stack the walker produced, kept in the ustacks maps under a hash of its PCs. */
struct hp_user_stack {
	__u32 nr;
	__u32 pad;
	__u64 pcs[HP_UNWIND_MAX_DEPTH]; /* leaf first */
};

_Static_assert(sizeof(struct hp_unwind_row) == 16, "hp_unwind_row layout");
_Static_assert(sizeof(struct hp_unwind_index) == sizeof(struct hp_unwind_row) &&
		       HP_UNWIND_INDEX_PER_SLOT * sizeof(__u32) == sizeof(struct hp_unwind_row),
	       "an index slot is a row slot");
_Static_assert(sizeof(struct hp_unwind_mapping) == 40, "hp_unwind_mapping layout");
_Static_assert(sizeof(struct hp_user_stack) == 8 + 8 * HP_UNWIND_MAX_DEPTH, "hp_user_stack");

_Static_assert(sizeof(struct hp_lock_key) == 48, "hp_lock_key layout");
_Static_assert(sizeof(struct hp_lock_value) == 48, "hp_lock_value layout");
_Static_assert(__builtin_offsetof(struct hp_lock_value, ns) == 0 &&
		       __builtin_offsetof(struct hp_lock_value, count) == 8,
	       "hp_lock_value starts with ns, count");
_Static_assert(sizeof(struct hp_sample_key) == 32, "hp_sample_key layout");
_Static_assert(sizeof(struct hp_thread_ctx) == 640, "hp_thread_ctx layout");
_Static_assert(sizeof(struct hp_tls_ref) == 32, "hp_tls_ref layout");
_Static_assert(sizeof(struct hp_py_proc) == 56, "hp_py_proc layout");
_Static_assert(sizeof(struct hp_go_label) == HP_GO_LABEL_SLOT, "hp_go_label layout");
_Static_assert(HP_GO_LABEL_SLOTS *HP_GO_LABEL_SLOT <= HP_THREAD_CTX_ATTRS, "Go labels fit");
_Static_assert(sizeof(struct hp_raw_stack) == 8 + 8 * (HP_OFFCPU_USER_DEPTH + HP_OFFCPU_KERN_DEPTH),
	       "hp_raw_stack layout");
_Static_assert(sizeof(struct hp_offcpu_key) == 40, "hp_offcpu_key layout");
_Static_assert(sizeof(struct hp_offcpu_value) == 48, "hp_offcpu_value layout");
/* BPF's hp_wait_add() updates either value through its first two fields. */
_Static_assert(__builtin_offsetof(struct hp_offcpu_value, ns) == 0 &&
		       __builtin_offsetof(struct hp_offcpu_value, count) == 8,
	       "hp_offcpu_value starts with ns, count");
_Static_assert(sizeof(struct hp_sample_value) == 40, "hp_sample_value layout");

#endif /* HOSTPROF_ABI_H */
