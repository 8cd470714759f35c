// SPDX-License-Identifier: BSD-2-Clause

// otlp-profiles-receiver: the OTLP gRPC endpoint that the OpenTelemetry eBPF profiler exports
// to in bench/report.sh. It decodes each ExportProfilesServiceRequest with the collector's own
// pdata (the version the profiler's module is built with, so the wire shape is the one it
// sends) and keeps, per thread name and stack, the number of samples: written as folded text
// (comm;root;...;leaf COUNT, the format of hostprof's folded output), rewritten after every
// request, for the fidelity figures.
//
// The profiler symbolizes only interpreted and kernel frames on the host; native frames arrive
// as a file address and a mapping, to be symbolized by a backend. Here the backend is this
// program: it reads the mapped file's symbol table (or its separate debug file, found by
// build-id under /usr/lib/debug) on this same host. A mapping names its file by base name only,
// so the files to symbolize are given with -elf and found by their GNU build-id. Kernel frames
// get hostprof's "_[k]" suffix.
//
// Usage: otlp-profiles-receiver [-folded FILE] [-pid PID]... [-elf PATH]... [-stats FILE]
//
//	[-listen 127.0.0.1:0]
//
// Prints the port it listens on as the first line of stdout. Without -folded it only counts
// requests and samples (the overhead runs, where the stacks are not read). -pid keeps only those
// processes' samples in the folded file. SIGUSR1 forgets what was received so far: the fidelity
// figures are taken in the profiler's steady state, after it has found the processes.
package main

import (
	"context"
	"debug/elf"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc"
	// The profiler may compress its requests.
	_ "google.golang.org/grpc/encoding/gzip"
)

type symbol struct {
	start, end uint64
	name       string
	rank       int // among symbols at one address, the lowest names it
}

// symtab is one file's function symbols, sorted by address.
type symtab []symbol

func (t symtab) lookup(addr uint64) (string, bool) {
	i := sort.Search(len(t), func(i int) bool { return t[i].start > addr }) - 1
	if i < 0 || addr >= t[i].end {
		return "", false
	}
	return t[i].name, true
}

func readSymbols(path string) symtab {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var t symtab
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || s.Size == 0 {
				continue
			}
			name := s.Name
			if at := strings.IndexByte(name, '@'); at > 0 {
				name = name[:at]
			}
			// At one address a global name is the one callers use; glibc's debug files
			// also hold local aliases (__libc_start_main_alias_1).
			rank := 2
			switch elf.ST_BIND(s.Info) {
			case elf.STB_GLOBAL:
				rank = 0
			case elf.STB_WEAK:
				rank = 1
			}
			t = append(t, symbol{s.Value, s.Value + s.Size, name, rank})
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	return t.sorted()
}

// sorted orders the symbols by address, the best-ranked first among those at one address,
// and keeps only that one.
func (t symtab) sorted() symtab {
	sort.Slice(t, func(i, j int) bool {
		if t[i].start != t[j].start {
			return t[i].start < t[j].start
		}
		return t[i].rank < t[j].rank
	})
	out := t[:0]
	for _, s := range t {
		if len(out) > 0 && out[len(out)-1].start == s.start {
			continue
		}
		out = append(out, s)
	}
	return out
}

type receiver struct {
	pprofileotlp.UnimplementedGRPCServer
	folded, stats string

	mu       sync.Mutex
	counts   map[string]int64
	requests int64
	samples  int64
	files    map[string]symtab
	byID     map[string]string // GNU build-id (hex) -> path, of the -elf files
	pids     map[string]bool   // -pid: only these processes in the folded file
}

// buildID reads the GNU build-id note of an ELF file, in hex.
func buildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_NOTE {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		// Notes: namesz, descsz, type (4 bytes each), then name and desc, each padded to 4.
		for len(data) >= 12 {
			nsz := int(f.ByteOrder.Uint32(data[0:]))
			dsz := int(f.ByteOrder.Uint32(data[4:]))
			typ := f.ByteOrder.Uint32(data[8:])
			nend := 12 + (nsz+3)&^3
			dend := nend + (dsz+3)&^3
			if dend > len(data) {
				break
			}
			if typ == 3 && nsz == 4 && string(data[12:15]) == "GNU" {
				return fmt.Sprintf("%x", data[nend:nend+dsz]), nil
			}
			data = data[dend:]
		}
	}
	return "", fmt.Errorf("%s: no GNU build-id", path)
}

// symbols gives the function symbols of a mapped file: its own .symtab and .dynsym, and those
// of its debug file when the distribution ships one (libc6-dbg), as hostprof reads them.
func (r *receiver) symbols(path, buildID string) symtab {
	key := path + "\x00" + buildID
	if t, ok := r.files[key]; ok {
		return t
	}
	if p, ok := r.byID[buildID]; ok {
		path = p
	}
	var t symtab
	if filepath.IsAbs(path) {
		t = readSymbols(path)
	}
	if len(buildID) > 2 {
		dbg := filepath.Join("/usr/lib/debug/.build-id", buildID[:2], buildID[2:]+".debug")
		t = append(t, readSymbols(dbg)...).sorted()
	}
	r.files[key] = t
	return t
}

func (r *receiver) Export(_ context.Context, req pprofileotlp.ExportRequest) (pprofileotlp.ExportResponse, error) {
	p := req.Profiles()
	dict := p.Dictionary()
	strs := dict.StringTable()
	str := func(i int32) string {
		if i < 0 || int(i) >= strs.Len() {
			return ""
		}
		return strs.At(int(i))
	}
	attrs := dict.AttributeTable()
	// attr gives the value of the attribute named key among the table indices idx.
	attr := func(idx []int32, key string) string {
		for _, i := range idx {
			if i < 0 || int(i) >= attrs.Len() {
				continue
			}
			a := attrs.At(int(i))
			if str(a.KeyStrindex()) == key {
				return a.Value().AsString()
			}
		}
		return ""
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	frame := func(li int32) string {
		if li < 0 || int(li) >= dict.LocationTable().Len() {
			return "[unknown]"
		}
		loc := dict.LocationTable().At(int(li))
		kind := attr(loc.AttributeIndices().AsRaw(), "profile.frame.type")
		if loc.Lines().Len() > 0 {
			// Interpreted or kernel frames: named by the profiler. An inlined chain is
			// innermost first; its outermost function stands for the location.
			ln := loc.Lines().At(loc.Lines().Len() - 1)
			name := "[unknown]"
			if fi := ln.FunctionIndex(); fi >= 0 && int(fi) < dict.FunctionTable().Len() {
				name = str(dict.FunctionTable().At(int(fi)).NameStrindex())
			}
			if kind == "kernel" {
				return name + "_[k]"
			}
			return name
		}
		mi := loc.MappingIndex()
		if mi < 0 || int(mi) >= dict.MappingTable().Len() {
			return fmt.Sprintf("[unknown+0x%x]", loc.Address())
		}
		m := dict.MappingTable().At(int(mi))
		path := str(m.FilenameStrindex())
		buildID := attr(m.AttributeIndices().AsRaw(), "process.executable.build_id.gnu")
		if name, ok := r.symbols(path, buildID).lookup(loc.Address()); ok {
			return name
		}
		return fmt.Sprintf("[%s+0x%x]", filepath.Base(path), loc.Address())
	}
	rps := p.ResourceProfiles()
	for i := 0; i < rps.Len(); i++ {
		sps := rps.At(i).ScopeProfiles()
		for j := 0; j < sps.Len(); j++ {
			profs := sps.At(j).Profiles()
			for k := 0; k < profs.Len(); k++ {
				r.addProfile(dict, profs.At(k), str, attr, frame)
			}
		}
	}
	if err := r.write(); err != nil {
		fmt.Fprintf(os.Stderr, "otlp-profiles-receiver: %v\n", err)
	}
	return pprofileotlp.NewExportResponse(), nil
}

func (r *receiver) addProfile(dict pprofile.ProfilesDictionary, prof pprofile.Profile,
	str func(int32) string, attr func([]int32, string) string, frame func(int32) string) {
	// On-CPU samples only: off-CPU profiles (off by default) count nanoseconds, not samples.
	if str(prof.SampleType().TypeStrindex()) != "samples" {
		return
	}
	samples := prof.Samples()
	for s := 0; s < samples.Len(); s++ {
		smp := samples.At(s)
		// A sample of the profiler's sampling origin carries one timestamp per event and no
		// value; a value, when there is one, is the count.
		n := int64(smp.TimestampsUnixNano().Len())
		if smp.Values().Len() > 0 {
			n = 0
			for _, v := range smp.Values().AsRaw() {
				n += v
			}
		}
		if n == 0 {
			continue
		}
		r.samples += n
		if r.folded == "" {
			continue
		}
		if len(r.pids) > 0 && !r.pids[attr(smp.AttributeIndices().AsRaw(), "process.pid")] {
			continue
		}
		comm := attr(smp.AttributeIndices().AsRaw(), "thread.name")
		if comm == "" {
			comm = "[unknown]"
		}
		var frames []string
		if si := smp.StackIndex(); si >= 0 && int(si) < dict.StackTable().Len() {
			locs := dict.StackTable().At(int(si)).LocationIndices().AsRaw()
			// Leaf first on the wire; folded text is root first.
			for x := len(locs) - 1; x >= 0; x-- {
				frames = append(frames, strings.ReplaceAll(frame(locs[x]), ";", ":"))
			}
		}
		key := strings.ReplaceAll(comm, ";", ":")
		if len(frames) > 0 {
			key += ";" + strings.Join(frames, ";")
		}
		r.counts[strings.ReplaceAll(key, " ", "_")] += n
	}
}

// write rewrites the folded file (and the stats) whole, through a rename, so that a reader
// never sees half of it.
func (r *receiver) write() error {
	keys := make([]string, 0, len(r.counts))
	for k := range r.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, r.counts[k])
	}
	if r.folded != "" {
		if err := replace(r.folded, b.String()); err != nil {
			return err
		}
	}
	if r.stats == "" {
		return nil
	}
	return replace(r.stats, fmt.Sprintf("requests %d\nsamples %d\n", r.requests, r.samples))
}

func replace(path, text string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	folded := flag.String("folded", "", "folded stacks written here after every request")
	pids := map[string]bool{}
	flag.Func("pid", "keep only this process's samples in the folded file (repeatable)", func(p string) error {
		if _, err := strconv.Atoi(p); err != nil {
			return fmt.Errorf("not a process id: %q", p)
		}
		pids[p] = true
		return nil
	})
	stats := flag.String("stats", "", "requests and samples received, written here")
	var elfs []string
	flag.Func("elf", "a file to symbolize native frames with (repeatable)", func(p string) error {
		elfs = append(elfs, p)
		return nil
	})
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: otlp-profiles-receiver [-folded FILE] [-pid PID]... [-elf PATH]... [-stats FILE] [-listen ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "otlp-profiles-receiver: listen on %s: %v\n", *listen, err)
		os.Exit(1)
	}
	r := &receiver{folded: *folded, stats: *stats, counts: map[string]int64{},
		files: map[string]symtab{}, byID: map[string]string{}, pids: pids}
	for _, p := range elfs {
		id, err := buildID(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "otlp-profiles-receiver: -elf %v\n", err)
			os.Exit(2)
		}
		r.byID[id] = p
	}
	if err := r.write(); err != nil {
		fmt.Fprintf(os.Stderr, "otlp-profiles-receiver: %v\n", err)
		os.Exit(1)
	}
	reset := make(chan os.Signal, 1)
	signal.Notify(reset, syscall.SIGUSR1)
	go func() {
		for range reset {
			r.mu.Lock()
			r.counts = map[string]int64{}
			r.requests, r.samples = 0, 0
			if err := r.write(); err != nil {
				fmt.Fprintf(os.Stderr, "otlp-profiles-receiver: %v\n", err)
			}
			r.mu.Unlock()
		}
	}()
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	pprofileotlp.RegisterGRPCServer(srv, r)
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintf(os.Stderr, "otlp-profiles-receiver: %v\n", err)
		os.Exit(1)
	}
}
