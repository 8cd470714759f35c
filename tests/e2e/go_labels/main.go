// SPDX-License-Identifier: BSD-2-Clause

// Command golabels burns CPU on two goroutines, part of the time inside pprof.Do with the labels a
// tracing integration sets (span_id and trace_id in hex, as Grafana's otel-profiling-go and
// Pyroscope name them) and part of the time with no labels at all, so that a profiler reading
// goroutine labels has a known answer: samples in inSpanA carry span A's labels, samples in
// inSpanB span B's, samples in noSpan none. Span B has ten labels (a Go 1.19-1.23 label map of
// two buckets); span A a value longer than the profiler keeps.
//
// With GOLABELS_OFF=1 in its environment it does the same work with no labels at all (the
// baseline of bench/bench_thread_ctx.sh).
//
// Usage: golabels SECONDS
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := sink
	for time.Now().Before(end) {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}

//go:noinline
func inSpanA() { burn(10 * time.Millisecond) }

//go:noinline
func inSpanB() { burn(10 * time.Millisecond) }

//go:noinline
func noSpan() { burn(10 * time.Millisecond) }

func worker(labels pprof.LabelSet, inSpan func(), until time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	ctx := context.Background()
	off := os.Getenv("GOLABELS_OFF") == "1"
	for time.Now().Before(until) {
		if off {
			inSpan()
		} else {
			pprof.Do(ctx, labels, func(context.Context) { inSpan() })
		}
		noSpan()
	}
}

func main() {
	secs := 5
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n <= 0 {
			fmt.Fprintln(os.Stderr, "usage: golabels SECONDS")
			os.Exit(2)
		}
		secs = n
	}
	until := time.Now().Add(time.Duration(secs) * time.Second)
	a := pprof.Labels("span_id", "a1a1a1a1a1a1a1a1", "trace_id", "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a01",
		"endpoint", "/checkout", "query", strings.Repeat("q", 80))
	b := pprof.Labels("span_id", "b2b2b2b2b2b2b2b2", "trace_id", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b02",
		"endpoint", "/cart", "l1", "v1", "l2", "v2", "l3", "v3", "l4", "v4", "l5", "v5", "l6", "v6",
		"l7", "v7")
	var wg sync.WaitGroup
	wg.Add(2)
	go worker(a, inSpanA, until, &wg)
	go worker(b, inSpanB, until, &wg)
	wg.Wait()
}
