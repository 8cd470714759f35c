/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The name of a Docker container (outside Kubernetes), read from Docker's own state on disk:
 * <root>/containers/<id>/config.v2.json. No Docker API socket: nothing to authorise, nothing that
 * can hang, and it works as long as the agent can read the directory (CAP_DAC_READ_SEARCH).
 */
#ifndef HOSTPROF_DOCKER_H
#define HOSTPROF_DOCKER_H

#include <stddef.h>

/* config.v2.json files larger than this are not read: real ones are a few KiB to tens of KiB. */
#define DOCKER_CONFIG_MAX_BYTES (1u << 20)

/*
 * The container's "Name" without its leading '/' into out (len bytes, NUL included).
 * container_id must be hex (1 to 128 digits, as proc__container_id() gives 64): anything else,
 * a path traversal say, is -EINVAL. Returns 0, or
 *   -ENOENT        no such container, or a config without a (non-empty) Name
 *   -EINVAL        bad arguments, a malformed config (not JSON, not an object, not a regular file),
 *                  a Name with control characters
 *   -EFBIG         a config over DOCKER_CONFIG_MAX_BYTES
 *   -E2BIG         the name does not fit in out
 *   -ENAMETOOLONG  the path does not fit in PATH_MAX
 *   -errno         from open() or read() (-EACCES without the rights to read Docker's state)
 * out is "" on any failure (when len > 0).
 */
int docker__container_name(const char *docker_root, const char *container_id, char *out,
			   size_t len);

/*
 * The "Name" of the text of one config.v2.json (len bytes, no NUL needed), without its leading
 * '/', into out (outlen bytes, NUL included). The parser alone, for docker__container_name() and
 * the fuzz target: 0, or -EINVAL (not one JSON object, trailing garbage, a Name with control
 * characters), -ENOENT (no non-empty string Name), -E2BIG (out too small), -ENOMEM. out is ""
 * on any failure (when outlen > 0).
 */
int docker__name_from_config(const char *json, size_t len, char *out, size_t outlen);

#endif /* HOSTPROF_DOCKER_H */
