// SPDX-License-Identifier: BSD-2-Clause

// Command otelgo is a small HTTP service instrumented with the OpenTelemetry Go SDK, whose tracer
// provider is wrapped by Grafana's otel-profiling-go: every local root span puts span_id,
// span_name and trace_id into the pprof labels of the goroutine that serves it, which is what a
// profiler reads to link its samples to the trace. The spans are exported to a file (stdouttrace,
// one JSON object per span) so that a test can check every span id a profile names against them.
//
// It serves /busy (about 20 ms of CPU in busyWork) and /light (about 1 ms in lightWork), and
// calls itself in a loop, alternating, for SECONDS; between calls it computes in idleWork, with
// no span.
//
// Usage: otelgo SECONDS SPANS_FILE
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	otelpyroscope "github.com/grafana/otel-profiling-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
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
func busyWork() { burn(20 * time.Millisecond) }

//go:noinline
func lightWork() { burn(time.Millisecond) }

//go:noinline
func idleWork() { burn(2 * time.Millisecond) }

func handler(name string, work func()) http.Handler {
	tracer := otel.Tracer("hostprof.test/otelgo")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, span := tracer.Start(r.Context(), name)
		defer span.End()
		work()
		io.WriteString(w, "ok\n")
	})
}

func run(secs int, spansFile string) error {
	f, err := os.Create(spansFile)
	if err != nil {
		return err
	}
	defer f.Close()
	exp, err := stdouttrace.New(stdouttrace.WithWriter(f))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("otelgo"))),
	)
	defer tp.Shutdown(context.Background())
	otel.SetTracerProvider(otelpyroscope.NewTracerProvider(tp))

	mux := http.NewServeMux()
	mux.Handle("/busy", handler("busy", busyWork))
	mux.Handle("/light", handler("light", lightWork))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(ln, mux)

	base := "http://" + ln.Addr().String()
	until := time.Now().Add(time.Duration(secs) * time.Second)
	for i := 0; time.Now().Before(until); i++ {
		path := "/busy"
		if i%2 == 1 {
			path = "/light"
		}
		resp, err := http.Get(base + path)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		idleWork()
	}
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: otelgo SECONDS SPANS_FILE")
		os.Exit(2)
	}
	secs, err := strconv.Atoi(os.Args[1])
	if err == nil && secs <= 0 {
		err = fmt.Errorf("not a positive number")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "otelgo: SECONDS:", err)
		os.Exit(2)
	}
	if err := run(secs, os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "otelgo:", err)
		os.Exit(1)
	}
}
