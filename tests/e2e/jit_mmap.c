// SPDX-License-Identifier: BSD-2-Clause
/*
 * jit_mmap: a tiny JIT. It writes machine code for a counting loop into anonymous memory (mmap,
 * then mprotect to read+execute), names it in /tmp/perf-PID.map the way JITs do
 * ("START SIZE name", hex), and calls it until SECONDS have passed. Nearly every sample then lands
 * in code that no file describes: only the perf map can name it.
 *
 * Usage: jit_mmap SECONDS   (prints its PID and the map's path, then runs)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define JIT_NAME "jit_hot_loop"

/*
 * uint64_t f(uint64_t n): counts n down to zero, then returns. With a frame-pointer frame, as the
 * code of V8 and HotSpot has: there is no unwind table for JIT code, and the frame pointer is
 * how a profiler gets from it back to its native caller.
 */
#if defined(__x86_64__)
static const unsigned char code[] = {
	0x55,		  /* push rbp */
	0x48, 0x89, 0xe5, /* mov rbp, rsp */
	0x48, 0x89, 0xf8, /* mov rax, rdi */
	0x48, 0xff, 0xc8, /* 1: dec rax */
	0x75, 0xfb,	  /* jnz 1b */
	0x5d,		  /* pop rbp */
	0xc3,		  /* ret */
};
#elif defined(__aarch64__)
static const uint32_t code[] = {
	0xa9bf7bfd, /* stp x29, x30, [sp, #-16]! */
	0x910003fd, /* mov x29, sp */
	0xf1000400, /* 1: subs x0, x0, #1 */
	0x54ffffe1, /* b.ne 1b */
	0xa8c17bfd, /* ldp x29, x30, [sp], #16 */
	0xd65f03c0, /* ret */
};
#else
#error "jit_mmap: no machine code for this architecture"
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The caller of the generated code, so that the stack has a named native frame above it. */
NOINLINE static void run_jit(uint64_t (*fn)(uint64_t), double seconds)
{
	double deadline = now() + seconds;

	KEEP_FRAME();
	do
		fn(20 * 1000 * 1000);
	while (now() < deadline);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	long page = sysconf(_SC_PAGESIZE);
	char path[64];
	void *mem;
	FILE *map;

	mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit_mmap: mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	__builtin___clear_cache((char *)mem, (char *)mem + sizeof(code));
	if (mprotect(mem, page, PROT_READ | PROT_EXEC)) {
		perror("jit_mmap: mprotect");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)mem, sizeof(code), JIT_NAME);
	fclose(map);
	printf("%d %s\n", (int)getpid(), path);
	fflush(stdout);
	run_jit((uint64_t(*)(uint64_t))mem, seconds);
	unlink(path);
	return 0;
}
