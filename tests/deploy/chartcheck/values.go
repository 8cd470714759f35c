package main

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// The few readings of config values that the checks compare with the pod or the unit around the
// config. Whether the config is valid at all is the agent's to say (`hostprof agent
// --print-config`, in check.sh): nothing here repeats its parser.

// contractCaps: the capabilities that the agent needs and that the unit and the DaemonSet must
// grant, no more (README.md, "Requirements"; `hostprof agent --help`).
var contractCaps = []string{"CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH",
	"CAP_SYS_RESOURCE", "CAP_SYSLOG", "CAP_CHECKPOINT_RESTORE"}

var durationRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(ms|s|m|h)$`)

// parseDuration returns a duration's seconds: "15s", "500ms", "2m", "1h", or a number.
func parseDuration(v interface{}) (float64, error) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		if err != nil || f < 0 {
			return 0, fmt.Errorf("%v is not a number of seconds", t)
		}
		return f, nil
	case float64:
		return t, nil
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
	return 0, fmt.Errorf("%v is not a duration", v)
}

// listenPort checks "[host]:port" and returns the port.
func listenPort(s string) (int, error) {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not host:port: %v", s, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%q: port %q is not 1..65535", s, port)
	}
	return p, nil
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
