/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging to stderr: levels, a rate limit for warnings that can repeat per sample, and the bridge
 * that routes libbpf's messages through the same levels.
 */
#ifndef HOSTPROF_LOG_H
#define HOSTPROF_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_ERROR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * A warning that may fire once per sample: the first one is printed, later ones are counted, and
 * log_ratelimit_flush() prints "... repeated N more times" for each. `key` is a static string
 * that identifies the warning kind.
 */
struct log_ratelimit {
	const char *key;
	unsigned long suppressed;
	int printed;
};

void log_warn_once(struct log_ratelimit *rl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_ratelimit_flush(struct log_ratelimit *rl);

/* Route libbpf's own messages through log_msg (warnings at WARN, debug at DEBUG). */
void log_bridge_libbpf(void);

#endif /* HOSTPROF_LOG_H */
