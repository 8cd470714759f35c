// SPDX-License-Identifier: BSD-2-Clause
#include "process/proc_watch.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostprof_abi.h"
#include "base/log.h"
#include "base/safe_open.h"
#include "base/thread.h"

/*
 * How long a poll of the ring buffer waits: the bound on how late the thread sees a stop, and on
 * how late it reads the records that do not wake it (execs, see hp_proc_event()).
 */
#define POLL_MS 250

/*
 * Binaries already handed over, by identity: the symbolizer's dso cache keeps what it read, so
 * each binary is opened once, not once per process (most processes map the same libc). A
 * direct-mapped set: a collision only costs an extra open.
 */
#define SEEN_BINARY_SLOTS 4096

/*
 * Processes read since their exec, by PID: a process sends an event each time its walk asks for
 * its tables, which is more than once when it maps more code (ld.so mapping libraries after the
 * first sample, dlopen). It is read at most READS_PER_EXEC times: the second read catches the
 * libraries of a process first sampled inside ld.so; later ones are the symbolizer's business
 * (it re-reads the maps of a live process when an address misses them).
 */
#define SEEN_PROC_SLOTS 4096
#define READS_PER_EXEC 2

struct seen_binary {
	uint64_t dev, inode;
};

struct seen_proc {
	pid_t pid;
	unsigned int reads;
};

struct proc_watch {
	struct ring_buffer *rb;
	struct proc_table *reader; /* never filled: its root and options are what reading needs */
	pthread_t thread;
	bool started;
	atomic_bool stop;

	pthread_mutex_t lock; /* guards the queue and the stats */
	struct proc_watch_item *queue;
	size_t max_queue, head, len;
	struct proc_watch_stats stats;
	atomic_uint_fast64_t announced; /* HP_UNWIND_REQ_LOAD records read */

	/* The thread's own. */
	struct seen_binary seen_binaries[SEEN_BINARY_SLOTS];
	struct seen_proc seen_procs[SEEN_PROC_SLOTS];
	char path[PATH_MAX];
};

void proc_watch_item__release(struct proc_watch_item *it)
{
	if (!it)
		return;
	proc__release(&it->proc);
	for (size_t i = 0; i < it->nr_binaries; i++) {
		if (it->binaries[i].fd >= 0)
			close(it->binaries[i].fd);
		free(it->binaries[i].path);
	}
	it->nr_binaries = 0;
}

static size_t binary_slot(uint64_t dev, uint64_t inode)
{
	return (size_t)(((inode ^ (dev << 32)) * 0x9e3779b97f4a7c15ULL) >> 52) % SEEN_BINARY_SLOTS;
}

static struct seen_proc *proc_slot(struct proc_watch *w, pid_t pid)
{
	return &w->seen_procs[((uint32_t)pid * 2654435769u) % SEEN_PROC_SLOTS];
}

/* Open the executable file mappings that were not handed over before. */
static void open_binaries(struct proc_watch *w, struct proc_watch_item *it)
{
	const struct maps *maps = &it->proc.maps;

	for (size_t i = 0; i < maps->n && it->nr_binaries < PROC_WATCH_MAX_BINARIES; i++) {
		const struct mapping *m = &maps->v[i];
		uint64_t dev = makedev(m->dev_major, m->dev_minor);
		struct seen_binary *seen = &w->seen_binaries[binary_slot(dev, m->inode)];
		struct proc_watch_binary *b = &it->binaries[it->nr_binaries];
		int fd;

		if (!m->executable || m->kind != MAPPING_FILE || !m->path ||
		    (seen->dev == dev && seen->inode == m->inode))
			continue;
		if (proc_table__mapping_path(w->reader, it->pid, m, w->path, sizeof(w->path)))
			continue;
		/* The process chose what is there: a FIFO would stall this thread for good. */
		fd = safe_open(w->path, SAFE_OPEN_MAX_ELF_BYTES, NULL);
		if (fd < 0)
			continue;
		*b = (struct proc_watch_binary){
			.fd = fd, .dev = dev, .inode = m->inode, .path = strdup(m->path)};
		if (!b->path) {
			close(fd);
			continue;
		}
		it->nr_binaries++;
		seen->dev = dev;
		seen->inode = m->inode;
	}
}

/* Queue an item; a full queue drops it (the capture loop is behind: it will read the process
 * itself at the drain, if it still lives). */
static void push(struct proc_watch *w, struct proc_watch_item *it)
{
	bool dropped = false;

	pthread_mutex_lock(&w->lock);
	if (w->len < w->max_queue) {
		w->queue[(w->head + w->len) % w->max_queue] = *it;
		w->len++;
		if (!it->forget)
			w->stats.read++;
	} else {
		w->stats.dropped++;
		dropped = true;
	}
	pthread_mutex_unlock(&w->lock);
	if (dropped) {
		/* Its binaries were not handed over after all. */
		for (size_t i = 0; i < it->nr_binaries; i++)
			w->seen_binaries[binary_slot(it->binaries[i].dev, it->binaries[i].inode)] =
				(struct seen_binary){0};
		proc_watch_item__release(it);
	}
}

static void count(struct proc_watch *w, uint64_t *field)
{
	pthread_mutex_lock(&w->lock);
	(*field)++;
	pthread_mutex_unlock(&w->lock);
}

static int on_event(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct hp_proc_event))
		proc_watch__handle(ctx, data);
	return 0;
}

void proc_watch__handle(struct proc_watch *w, const struct hp_proc_event *ev)
{
	struct proc_watch_item it = {0};
	struct seen_proc *seen;
	int err;

	count(w, &w->stats.events);
	if ((pid_t)ev->tgid <= 0)
		return;
	it.pid = (pid_t)ev->tgid;
	seen = proc_slot(w, it.pid);
	if (ev->kind == HP_UNWIND_REQ_EXEC) {
		*seen = (struct seen_proc){.pid = it.pid};
		it.forget = true;
		push(w, &it);
		return;
	}
	if (ev->kind != HP_UNWIND_REQ_LOAD)
		return;
	atomic_fetch_add(&w->announced, 1);
	if (seen->pid != it.pid)
		*seen = (struct seen_proc){.pid = it.pid};
	if (seen->reads >= READS_PER_EXEC)
		return;
	seen->reads++;
	err = proc_table__read(w->reader, it.pid, &it.proc);
	if (err) {
		if (err == -ESRCH)
			count(w, &w->stats.missed);
		proc__release(&it.proc);
		return;
	}
	open_binaries(w, &it);
	push(w, &it);
}

static void *watch_thread(void *arg)
{
	struct proc_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		int n = ring_buffer__poll(w->rb, POLL_MS);

		/* A poll that timed out read nothing: the records that woke no one are read now. */
		if (n == 0)
			n = ring_buffer__consume(w->rb);
		if (n < 0 && n != -EINTR) {
			log_warn("process events: %s; short-lived processes are read at the drain",
				 strerror(-n));
			break;
		}
	}
	return NULL;
}

struct proc_watch *proc_watch__new(int events_fd, const char *proc_root, size_t max_queue)
{
	struct proc_watch *w;
	int err;

	if (!max_queue) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	w->max_queue = max_queue;
	w->queue = calloc(max_queue, sizeof(*w->queue));
	w->reader = proc_table__new(proc_root, 1);
	if (!w->queue || !w->reader) {
		err = ENOMEM;
		goto fail;
	}
	if (events_fd < 0)
		return w;
	w->rb = ring_buffer__new(events_fd, on_event, w, NULL);
	if (!w->rb) {
		err = errno;
		goto fail;
	}
	/* With every signal blocked: Ctrl-C and SIGTERM are the main thread's to handle. */
	err = -thread__start(&w->thread, watch_thread, w);
	if (err)
		goto fail;
	w->started = true;
	return w;
fail:
	proc_watch__delete(w);
	errno = err;
	return NULL;
}

void proc_watch__delete(struct proc_watch *w)
{
	if (!w)
		return;
	if (w->started) {
		atomic_store(&w->stop, true);
		pthread_join(w->thread, NULL);
	}
	ring_buffer__free(w->rb);
	for (size_t i = 0; i < w->len; i++)
		proc_watch_item__release(&w->queue[(w->head + i) % w->max_queue]);
	free(w->queue);
	proc_table__delete(w->reader);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

size_t proc_watch__take(struct proc_watch *w, struct proc_watch_item *out, size_t max)
{
	size_t n = 0;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	while (n < max && w->len) {
		out[n++] = w->queue[w->head];
		w->head = (w->head + 1) % w->max_queue;
		w->len--;
	}
	pthread_mutex_unlock(&w->lock);
	return n;
}

void proc_watch__stats(struct proc_watch *w, struct proc_watch_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	*out = w->stats;
	out->queued = w->len;
	pthread_mutex_unlock(&w->lock);
}

uint64_t proc_watch__announced(const struct proc_watch *w)
{
	return w ? atomic_load(&w->announced) : 0;
}
