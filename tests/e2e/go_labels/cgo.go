// SPDX-License-Identifier: BSD-2-Clause

//go:build hostprof_cgo

// Built with -tags hostprof_cgo, golabels links the C runtime: the Go runtime then keeps g in a
// TLS variable of the executable's own PT_TLS block (runtime.tlsg), placed by the C linker.
package main

// static int twice(int x) { return 2 * x; }
import "C"

var _ = C.twice(1)
