// SPDX-License-Identifier: BSD-2-Clause
#include "formats/payload.h"

#include <stdlib.h>

void export_payload__release(struct export_payload *p)
{
	if (!p)
		return;
	free(p->body);
	free(p->query);
	free(p->what);
	p->body = NULL;
	p->len = 0;
	p->query = NULL;
	p->what = NULL;
}
