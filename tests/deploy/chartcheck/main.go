// chartcheck checks what Helm cannot know about hostprof's deployment artifacts: that the
// objects `helm template` rendered run the agent as it needs to run, and that the systemd unit
// agrees with the config it runs. Helm renders and lints; `hostprof agent --print-config` judges
// the configs; both run in tests/deploy/check.sh.
//
//	chartcheck manifest -manifest FILE -probe FILE -namespace NS -out DIR
//	    checks the manifest that `helm template` printed against the values that Helm computed
//	    (-probe: the JSON {values, appVersion, notes} that check.sh's probe template renders
//	    with the same values) and writes DIR/config.yaml, the agent's config from the ConfigMap, and DIR/NOTES.txt;
//	chartcheck unit -unit FILE CONFIG...
//	    checks that the systemd unit grants the contract's capabilities, hides nothing the agent
//	    reads, and agrees with each config (stop timeout, writable paths, credentials).
//
// YAML is read by python3's PyYAML (-python, yaml.go). Exit status 1 on any problem, each
// printed on its own line.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: chartcheck manifest|unit [flags] (see main.go)")
		os.Exit(2)
	}
	var problems []string
	var err error
	switch os.Args[1] {
	case "manifest":
		problems, err = cmdManifest(os.Args[2:])
	case "unit":
		problems, err = cmdUnit(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "chartcheck: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "chartcheck: %v\n", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "chartcheck: %s\n", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// probe is what check.sh's probe template prints: Helm's own view of the release.
type probe struct {
	Values     map[string]interface{} `json:"values"`
	AppVersion string                 `json:"appVersion"`
	Notes      string                 `json:"notes"`
}

func readProbe(path string) (*probe, error) {
	docs, err := loadYAML(false, path)
	if err != nil {
		return nil, err
	}
	// helm template prints "---" and a "# Source:" comment before the one document.
	var found []interface{}
	for _, d := range docs[0] {
		if d != nil {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s: %d documents, want the probe's one", path, len(found))
	}
	text, _ := json.Marshal(found[0])
	var p probe
	if err := json.Unmarshal(text, &p); err != nil || p.Values == nil {
		return nil, fmt.Errorf("%s: not the probe's {values, appVersion, notes}", path)
	}
	return &p, nil
}

func cmdManifest(args []string) ([]string, error) {
	fs := flag.NewFlagSet("manifest", flag.ExitOnError)
	manifestPath := fs.String("manifest", "", "what `helm template` printed")
	probePath := fs.String("probe", "", "what the probe template printed, with the same values")
	ns := fs.String("namespace", "", "the release's namespace (helm template -n)")
	out := fs.String("out", "", "where to write config.yaml")
	fs.StringVar(&python, "python", python, "a python3 with PyYAML")
	fs.Parse(args)
	if *manifestPath == "" || *probePath == "" || *ns == "" || *out == "" || fs.NArg() != 0 {
		return nil, fmt.Errorf("manifest: -manifest, -probe, -namespace and -out are required")
	}
	pr, err := readProbe(*probePath)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(*manifestPath)
	if err != nil {
		return nil, err
	}
	parsed, err := loadYAML(true, *manifestPath)
	if err != nil {
		return nil, err
	}
	var problems []string
	if strings.TrimSpace(pr.Notes) == "" {
		problems = append(problems, "NOTES.txt renders empty")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(*out, "NOTES.txt"), []byte(pr.Notes), 0o644); err != nil {
		return nil, err
	}
	ck := &checker{values: pr.Values, namespace: *ns, appVersion: pr.AppVersion}
	configText := ck.checkManifest(parsed[0], string(text))
	if configText != "" {
		configPath := filepath.Join(*out, "config.yaml")
		if err := os.WriteFile(configPath, []byte(configText), 0o644); err != nil {
			return nil, err
		}
		cfg, err := loadYAMLMap(true, configPath)
		if err != nil {
			return nil, err
		}
		ck.checkConfig(cfg, parsed[0])
	}
	return append(problems, ck.errs...), nil
}

func cmdUnit(args []string) ([]string, error) {
	fs := flag.NewFlagSet("unit", flag.ExitOnError)
	unitPath := fs.String("unit", "", "the systemd unit that runs with these configs")
	fs.StringVar(&python, "python", python, "a python3 with PyYAML")
	fs.Parse(args)
	if *unitPath == "" || fs.NArg() == 0 {
		return nil, fmt.Errorf("unit: -unit and a config file are required")
	}
	u, err := readUnit(*unitPath)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, f := range fs.Args() {
		cfg, err := loadYAMLMap(true, f)
		if err != nil {
			return nil, err
		}
		for _, e := range checkUnit(u, cfg) {
			problems = append(problems, *unitPath+": "+e)
		}
	}
	return problems, nil
}
