package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// What `systemd-analyze verify` cannot know: that the unit and the config it runs agree, and
// that the unit grants the contract's capabilities and nothing else.

// unit maps "Section.Key" to its assignments, in order.
type unit map[string][]string

func readUnit(path string) (unit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
		default:
			kv := strings.SplitN(line, "=", 2)
			if len(kv) != 2 {
				return nil, fmt.Errorf("%s: %q is not KEY=VALUE", path, line)
			}
			k := section + "." + strings.TrimSpace(kv[0])
			u[k] = append(u[k], strings.TrimSpace(kv[1]))
		}
	}
	return u, sc.Err()
}

func (u unit) last(key string) string {
	v := u[key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// words: every assignment of key, split on spaces.
func (u unit) words(key string) []string {
	var w []string
	for _, v := range u[key] {
		w = append(w, strings.Fields(v)...)
	}
	return w
}

var systemdTime = regexp.MustCompile(`^([0-9]+)(s|sec|min|m|h)?$`)

func systemdSeconds(v string) (float64, bool) {
	mm := systemdTime.FindStringSubmatch(v)
	if mm == nil {
		return 0, false
	}
	n, _ := strconv.ParseFloat(mm[1], 64)
	switch mm[2] {
	case "min", "m":
		n *= 60
	case "h":
		n *= 3600
	}
	return n, true
}

func checkUnit(u unit, cfg map[string]interface{}) []string {
	var errs []string
	fail := func(format string, args ...interface{}) {
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	if u.last("Service.Type") != "notify" {
		fail("Type=%s, want notify (the agent sends READY=1)", u.last("Service.Type"))
	}
	if !strings.Contains(u.last("Service.ExecStart"), " agent --config /etc/hostprof/config.yaml") {
		fail("ExecStart= does not run `hostprof agent --config /etc/hostprof/config.yaml`")
	}

	want := append([]string(nil), contractCaps...)
	sort.Strings(want)
	for _, key := range []string{"Service.CapabilityBoundingSet", "Service.AmbientCapabilities"} {
		got := u.words(key)
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			fail("%s=%v, want the contract's %v", strings.TrimPrefix(key, "Service."), got, want)
		}
	}
	for _, opt := range []string{"ProtectKernelTunables", "ProtectKernelLogs", "ProtectProc",
		"ProcSubset", "PrivateUsers"} {
		if v := u.last("Service." + opt); v != "" && v != "no" && v != "default" && v != "all" {
			fail("%s=%s hides what the agent reads (see the comments in the unit)", opt, v)
		}
	}

	stop, ok := systemdSeconds(u.last("Service.TimeoutStopSec"))
	deadline := 10.0
	if d, found := lookup(cfg, "export.deadline"); found {
		deadline, _ = parseDuration(d)
	}
	if !ok || stop <= deadline {
		fail("TimeoutStopSec=%s is not above export.deadline (%gs)", u.last("Service.TimeoutStopSec"), deadline)
	}

	writable := u.words("Service.ReadWritePaths")
	for _, d := range u.words("Service.CacheDirectory") {
		writable = append(writable, "/var/cache/"+d)
	}
	for _, key := range []string{"cache_dir", "export.directory"} {
		dir, _ := lookup(cfg, key)
		if s(dir) == "" {
			continue
		}
		ok := false
		for _, w := range writable {
			ok = ok || s(dir) == w || strings.HasPrefix(s(dir), w+"/")
		}
		if !ok {
			fail("%s %s is not writable under ProtectSystem=strict (ReadWritePaths=%v)", key, s(dir), writable)
		}
	}

	creds := map[string]bool{}
	for _, c := range u["Service.LoadCredential"] {
		creds[strings.SplitN(c, ":", 2)[0]] = true
	}
	for _, exp := range []string{"otlp", "pyroscope"} {
		files, _ := lookup(cfg, "export."+exp+".header_files")
		for name, f := range m(files) {
			id := strings.TrimPrefix(s(f), "/run/credentials/hostprof.service/")
			if id == s(f) || !creds[id] {
				fail("header_files %s: %v is not a LoadCredential= of this unit", name, f)
			}
		}
	}
	if listen, _ := lookup(cfg, "http_listen"); s(listen) != "" &&
		!strings.HasPrefix(s(listen), "127.0.0.1:") && !strings.HasPrefix(s(listen), "[::1]:") {
		fail("the example's http_listen %v is not loopback: /metrics would face the network", listen)
	}
	return errs
}
