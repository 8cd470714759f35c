package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The agent's configuration schema, as /work/notes/agent-config-schema.md (the contract between
// the parser in src/ and these artifacts) writes it: every key, its type and, where the contract
// gives them, its allowed values. The parser is the authority at run time; this copy lets the
// files that deployments ship (systemd/config.yaml, the chart's rendered ConfigMap) be checked
// without it.

type kind int

const (
	kSection    kind = iota
	kInt             // an integer in [min, max]
	kBool            // true | false
	kString          // any string
	kPath            // "" or an absolute path
	kDuration        // "15s", "500ms", "2m", "1h", or a number of seconds
	kEnum            // one of enum
	kTypes           // a non-empty list of distinct enum values
	kListen          // "" or [host]:port
	kURL             // "" or an http(s) URL (or host:port, which gRPC takes)
	kHeaders         // name: value
	kHeaderFile      // name: absolute path
	kAutoBool        // auto | true | false
	kRelabel         // the list of relabel rules
)

type spec struct {
	kind     kind
	min, max int64
	enum     []string
	fields   map[string]*spec
}

func section(fields map[string]*spec) *spec { return &spec{kind: kSection, fields: fields} }
func integer(min, max int64) *spec          { return &spec{kind: kInt, min: min, max: max} }
func enum(values ...string) *spec           { return &spec{kind: kEnum, enum: values} }
func simple(k kind) *spec                   { return &spec{kind: k} }

const maxInt = int64(1) << 62

var headerSpecs = map[string]*spec{
	"headers":      simple(kHeaders),
	"header_files": simple(kHeaderFile),
}

var configSchema = section(map[string]*spec{
	"frequency":       integer(1, 10000),
	"types":           {kind: kTypes, enum: []string{"cpu", "wall", "offcpu", "contention"}},
	"upload_interval": simple(kDuration),
	"unwind":          enum("dwarf", "fp"),
	"unwind_depth":    integer(1, maxInt),
	"cache_dir":       simple(kPath),
	"include_idle":    simple(kBool),
	"http_listen":     simple(kListen),
	"log_level":       enum("error", "warn", "info", "debug"),
	"limits": section(map[string]*spec{
		"stack_map_entries":    integer(1, maxInt),
		"counts_map_entries":   integer(1, maxInt),
		"max_processes":        integer(1, maxInt),
		"max_binaries":         integer(1, maxInt),
		"max_cached_locations": integer(1, maxInt),
		"max_dwarf_bytes":      integer(1<<20, 1<<34),
		"unwind_table_rows":    integer(1, maxInt),
		"export_queue_bytes":   integer(1, maxInt),
	}),
	"export": section(map[string]*spec{
		"deadline":   simple(kDuration),
		"directory":  simple(kPath),
		"keep_files": integer(0, maxInt),
		"otlp": section(merge(headerSpecs, map[string]*spec{
			"endpoint":    simple(kURL),
			"protocol":    enum("http/protobuf", "http/json", "grpc"),
			"compression": enum("gzip", "none"),
			"timeout":     simple(kDuration),
			"ca_file":     simple(kPath),
			"insecure":    simple(kBool),
			"sample_type": enum("cpu", "samples"),
		})),
		"pyroscope": section(merge(headerSpecs, map[string]*spec{
			"url": simple(kURL),
			"api": enum("push", "ingest"),
		})),
	}),
	"kubernetes": section(map[string]*spec{
		"enabled":          simple(kAutoBool),
		"node_name":        simple(kString),
		"kubelet_url":      simple(kURL),
		"token_file":       simple(kPath),
		"ca_file":          simple(kPath),
		"insecure":         simple(kBool),
		"refresh_interval": simple(kDuration),
	}),
	"debuginfod": section(map[string]*spec{
		"timeout": simple(kDuration),
	}),
	"docker": section(map[string]*spec{
		"root": simple(kPath),
	}),
	"relabel": simple(kRelabel),
})

// The capabilities that the contract lists, in its order.
var schemaCaps = []string{"CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH",
	"CAP_SYS_RESOURCE", "CAP_SYSLOG", "CAP_CHECKPOINT_RESTORE"}

func merge(a, b map[string]*spec) map[string]*spec {
	m := map[string]*spec{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

var durationRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(ms|s|m|h)$`)

// parseDuration returns a duration's seconds (the contract's forms only).
func parseDuration(v interface{}) (float64, error) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		if err != nil || f < 0 {
			return 0, fmt.Errorf("%v is not a number of seconds", t)
		}
		return f, nil
	case string:
		m := durationRe.FindStringSubmatch(t)
		if m == nil {
			return 0, fmt.Errorf("%q is not a duration (15s, 500ms, 2m, 1h or seconds)", t)
		}
		f, _ := strconv.ParseFloat(strings.TrimSuffix(t, m[2]), 64)
		switch m[2] {
		case "ms":
			f /= 1000
		case "m":
			f *= 60
		case "h":
			f *= 3600
		}
		return f, nil
	}
	return 0, fmt.Errorf("%s is not a duration", describe(v))
}

func describe(v interface{}) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(t)
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case map[string]interface{}:
		return "a mapping"
	case []interface{}:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// validateConfig checks a parsed config file (numbers as json.Number). complete: every key of
// the schema must be there (the example that documents them all).
func validateConfig(cfg map[string]interface{}, complete bool) []string {
	var errs []string
	validate("", cfg, configSchema, complete, &errs)
	return errs
}

func validate(path string, v interface{}, s *spec, complete bool, errs *[]string) {
	fail := func(format string, args ...interface{}) {
		name := path
		if name == "" {
			name = "(top level)"
		}
		*errs = append(*errs, name+": "+fmt.Sprintf(format, args...))
	}
	switch s.kind {
	case kSection:
		m, ok := v.(map[string]interface{})
		if !ok {
			fail("%s, want a mapping", describe(v))
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child, known := s.fields[k]
			if !known {
				fail("unknown key %q", k)
				continue
			}
			validate(join(path, k), m[k], child, complete, errs)
		}
		if complete {
			want := make([]string, 0, len(s.fields))
			for k := range s.fields {
				want = append(want, k)
			}
			sort.Strings(want)
			for _, k := range want {
				if _, ok := m[k]; !ok {
					fail("key %q is missing (this file documents every key)", k)
				}
			}
		}
	case kInt:
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			fail("%s, want an integer", describe(v))
		} else if i < s.min || i > s.max {
			fail("%d is out of range [%d, %d]", i, s.min, s.max)
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			fail("%s, want true or false", describe(v))
		}
	case kString:
		if _, ok := v.(string); !ok {
			fail("%s, want a string", describe(v))
		}
	case kPath:
		if p, ok := v.(string); !ok || (p != "" && !strings.HasPrefix(p, "/")) {
			fail("%s, want \"\" or an absolute path", describe(v))
		}
	case kDuration:
		if _, err := parseDuration(v); err != nil {
			fail("%v", err)
		}
	case kEnum:
		if str, ok := v.(string); !ok || !contains(s.enum, str) {
			fail("%s, want one of %s", describe(v), strings.Join(s.enum, " | "))
		}
	case kTypes:
		l, ok := v.([]interface{})
		if !ok || len(l) == 0 {
			fail("%s, want a non-empty list of %s", describe(v), strings.Join(s.enum, ", "))
			return
		}
		seen := map[string]bool{}
		for _, x := range l {
			str, ok := x.(string)
			if !ok || !contains(s.enum, str) {
				fail("%s is not one of %s", describe(x), strings.Join(s.enum, ", "))
			} else if seen[str] {
				fail("%q twice", str)
			}
			seen[str] = true
		}
	case kListen:
		str, ok := v.(string)
		if !ok {
			fail("%s, want \"\" or host:port", describe(v))
		} else if str != "" {
			if _, err := listenPort(str); err != nil {
				fail("%v", err)
			}
		}
	case kURL:
		str, ok := v.(string)
		if !ok {
			fail("%s, want \"\" or a URL", describe(v))
		} else if str != "" {
			if err := checkURL(str); err != nil {
				fail("%v", err)
			}
		}
	case kHeaders, kHeaderFile:
		m, ok := v.(map[string]interface{})
		if !ok {
			fail("%s, want a mapping of header names", describe(v))
			return
		}
		for name, x := range m {
			str, ok := x.(string)
			if !headerName.MatchString(name) {
				fail("%q is not a header name", name)
			}
			if !ok {
				fail("header %q: %s, want a string", name, describe(x))
			} else if s.kind == kHeaderFile && !strings.HasPrefix(str, "/") {
				fail("header %q: %q is not an absolute path", name, str)
			}
		}
	case kAutoBool:
		if str, ok := v.(string); ok && (str == "auto" || str == "true" || str == "false") {
			return
		}
		if _, ok := v.(bool); !ok {
			fail("%s, want auto, true or false", describe(v))
		}
	case kRelabel:
		validateRelabel(path, v, fail)
	}
}

var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

func validateRelabel(path string, v interface{}, fail func(string, ...interface{})) {
	rules, ok := v.([]interface{})
	if !ok {
		fail("%s, want a list of rules", describe(v))
		return
	}
	for i, r := range rules {
		rule, ok := r.(map[string]interface{})
		if !ok {
			fail("rule %d: %s, want a mapping", i+1, describe(r))
			continue
		}
		for k, x := range rule {
			if !contains([]string{"action", "source", "regex", "target", "replacement"}, k) {
				fail("rule %d: unknown key %q", i+1, k)
			} else if _, ok := x.(string); !ok {
				fail("rule %d: %s: %s, want a string", i+1, k, describe(x))
			}
		}
		action, _ := rule["action"].(string)
		if !contains([]string{"keep", "drop", "replace"}, action) {
			fail("rule %d: action %s, want keep | drop | replace", i+1, describe(rule["action"]))
		}
		for _, k := range []string{"source", "regex"} {
			if str, _ := rule[k].(string); str == "" {
				fail("rule %d: %s is missing", i+1, k)
			}
		}
		if re, ok := rule["regex"].(string); ok {
			// POSIX extended, as the agent's regcomp(REG_EXTENDED) reads it.
			if _, err := regexp.CompilePOSIX(re); err != nil {
				fail("rule %d: regex %q: %v", i+1, re, err)
			}
		}
		_, hasTarget := rule["target"]
		_, hasRepl := rule["replacement"]
		if action == "replace" && !hasTarget {
			fail("rule %d: replace needs a target", i+1)
		}
		if action != "replace" && (hasTarget || hasRepl) {
			fail("rule %d: target and replacement are for replace only", i+1)
		}
	}
}

// listenPort checks "[host]:port" and returns the port.
func listenPort(s string) (int, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not host:port: %v", s, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%q: port %q is not 1..65535", s, port)
	}
	_ = host
	return p, nil
}

func checkURL(s string) error {
	if !strings.Contains(s, "://") {
		// gRPC endpoints may be given as host:port.
		if _, err := listenPort(s); err != nil {
			return fmt.Errorf("%q is neither an http(s) URL nor host:port", s)
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %v", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lookup follows a dotted path through nested mappings.
func lookup(v interface{}, path string) (interface{}, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]interface{})
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
