// SPDX-License-Identifier: BSD-2-Clause
#include "formats/encode_common.h"

#include <errno.h>
#include <stdlib.h>

#include "base/atomic_file.h"

int encode__pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
	size_t size = protobuf_c_message_get_packed_size(m);
	/* malloc(0) may return NULL, which would look like ENOMEM. */
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return -ENOMEM;
	if (protobuf_c_message_pack(m, buf) != size) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*len = size;
	return 0;
}

int encode__write_file(int err, void *buf, size_t len, const char *path)
{
	if (!err)
		err = atomic_file__write(path, buf, len);
	free(buf);
	return err;
}
