// SPDX-License-Identifier: BSD-2-Clause
/* base/pid_records.h: records found by PID, made zeroed, removed, and bounded: at the cap only
 * the records keep() wants stay, and a full set of wanted ones refuses a new process. */
#include <stdbool.h>
#include <stdint.h>

#include "base/pid_records.h"
#include "check.h"

struct rec {
	pid_t pid;
	bool keep;
	uint64_t payload;
};

static bool wanted(const void *r)
{
	return ((const struct rec *)r)->keep;
}

int main(void)
{
	struct pid_records r = PID_RECORDS_INIT(sizeof(struct rec), 4);
	struct rec *a, *b, *c;

	CHECK(pid_records__find(&r, 1) == NULL, "empty");
	a = pid_records__get(&r, 1, wanted);
	CHECK(a && a->pid == 1 && !a->keep && a->payload == 0, "made zeroed with its pid");
	a->keep = true;
	a->payload = 11;
	CHECK(pid_records__get(&r, 1, wanted) == a, "found again, not made twice");
	for (pid_t p = 2; p <= 4; p++)
		CHECK(pid_records__get(&r, p, wanted) != NULL, "pid %d", (int)p);
	CHECK_U64(r.n, 4);
	/* Full: the three not kept go, the new one comes in. */
	c = pid_records__get(&r, 5, wanted);
	CHECK(c && c->pid == 5, "room made at the cap");
	CHECK_U64(r.n, 2);
	a = pid_records__find(&r, 1);
	CHECK(a && a->payload == 11, "the kept record survived whole");
	CHECK(pid_records__find(&r, 2) == NULL, "a refused one is gone");
	/* Every record kept: at the cap a new process is refused. */
	c->keep = true;
	for (pid_t p = 6; p <= 7; p++) {
		b = pid_records__get(&r, p, wanted);
		CHECK(b != NULL, "pid %d", (int)p);
		if (b)
			b->keep = true;
	}
	CHECK(pid_records__get(&r, 8, wanted) == NULL, "full of kept records");
	/* Removal: the last record takes the place. */
	pid_records__remove(&r, pid_records__find(&r, 1));
	CHECK(pid_records__find(&r, 1) == NULL, "removed");
	CHECK(pid_records__find(&r, 7) != NULL && pid_records__find(&r, 5) != NULL, "others stay");
	CHECK_U64(r.n, 3);
	pid_records__release(&r);
	CHECK_U64(r.n, 0);
	return check_summary("test_pid_records");
}
