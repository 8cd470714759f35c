// SPDX-License-Identifier: BSD-2-Clause

// Command gooffsets prints, for the Go binaries named on its command line, the line of
// src/symbols/go_labels_ref.c's layout table that their own DWARF gives: the offsets of
// runtime.g's m and labels and of runtime.m's curg, and whether the Go release keeps labels in a
// map (before 1.24) or a slice. scripts/go_offsets.sh builds one binary per release and runs it.
//
// Usage: gooffsets BINARY...
package main

import (
	"debug/dwarf"
	"debug/elf"
	"debug/buildinfo"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// members returns the offsets of the named members of the named struct types.
func members(d *dwarf.Data, want map[string][]string) (map[string]int64, error) {
	out := map[string]int64{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			return out, nil
		}
		if e.Tag != dwarf.TagStructType {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		fields, ok := want[name]
		if !ok || !e.Children {
			continue
		}
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			n, _ := c.Val(dwarf.AttrName).(string)
			for _, f := range fields {
				if f == n {
					if off, ok := c.Val(dwarf.AttrDataMemberLoc).(int64); ok {
						out[name+"."+n] = off
					}
				}
			}
			if c.Children {
				r.SkipChildren()
			}
		}
	}
}

func line(path string) (string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", err
	}
	parts := strings.SplitN(strings.TrimPrefix(bi.GoVersion, "go1."), ".", 2)
	minor, err := strconv.Atoi(parts[0])
	if err != nil {
		return "", fmt.Errorf("%s: version %q", path, bi.GoVersion)
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return "", fmt.Errorf("%s: %v (build without -w)", path, err)
	}
	off, err := members(d, map[string][]string{"runtime.g": {"m", "labels"}, "runtime.m": {"curg"}})
	if err != nil {
		return "", err
	}
	for _, k := range []string{"runtime.g.m", "runtime.m.curg", "runtime.g.labels"} {
		if _, ok := off[k]; !ok {
			return "", fmt.Errorf("%s: no %s in its DWARF", path, k)
		}
	}
	record := "HP_CTX_GO_SLICE"
	if minor < 24 {
		record = "HP_CTX_GO_MAP"
	}
	return fmt.Sprintf("{%d, %d, %d, %d, %s}, /* %s %s */", minor, off["runtime.g.m"],
		off["runtime.m.curg"], off["runtime.g.labels"], record, bi.GoVersion, f.Machine), nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gooffsets BINARY...")
		os.Exit(2)
	}
	status := 0
	for _, p := range os.Args[1:] {
		l, err := line(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gooffsets:", err)
			status = 1
			continue
		}
		fmt.Println(l)
	}
	os.Exit(status)
}
