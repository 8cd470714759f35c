// SPDX-License-Identifier: BSD-2-Clause

// Replaces the profiler's rlimit/rlimit.go at build time (go build -overlay, see
// bench/otelprof.mk); nothing else of it is changed. Its MaximizeMemlock raises RLIMIT_MEMLOCK
// to infinity, hard limit included, which needs CAP_SYS_RESOURCE: root in a container without
// it (this machine and CI) cannot, and the profiler then refuses to start. Since Linux 5.11 BPF
// memory is charged to the memory cgroup and the limit is not consulted, so where the raise is
// refused this keeps the limit as it is and goes on, as libbpf and cilium/ebpf do.
package rlimit

import (
	"errors"

	"golang.org/x/sys/unix"
)

// MaximizeMemlock raises the memlock limit to infinity where the process may; where it may not
// (EPERM), it leaves the limit alone. It returns a function that restores the old limit.
func MaximizeMemlock() (func(), error) {
	var old unix.Rlimit
	inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Prlimit(0, unix.RLIMIT_MEMLOCK, &inf, &old); err != nil {
		if errors.Is(err, unix.EPERM) {
			return func() {}, nil
		}
		return nil, err
	}
	return func() { _ = unix.Setrlimit(unix.RLIMIT_MEMLOCK, &old) }, nil
}
