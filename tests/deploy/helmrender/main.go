// helmrender checks hostprof's deployment artifacts without Helm, a cluster or systemd running.
//
//	helmrender chart -chart DIR [-f VALUES]... -out DIR [-release NAME] [-namespace NS]
//	    renders the chart as `helm template` would (Go's text/template with the Helm functions
//	    the chart uses), writes OUT/manifest.yaml, OUT/NOTES.txt and OUT/config.yaml (the
//	    agent's config from the ConfigMap), then checks them (check.go).
//	helmrender config [-complete] [-unit FILE] CONFIG...
//	    checks agent config files against the schema; -complete: every key must be there;
//	    -unit: and against the systemd unit that runs them.
//
// YAML is read by python3's PyYAML (-python, yaml.go). Exit status 1 on any problem, each
// printed on its own line.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

type multiFlag []string

func (f *multiFlag) String() string     { return strings.Join(*f, ",") }
func (f *multiFlag) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: helmrender chart|config [flags] (see main.go)")
		os.Exit(2)
	}
	var problems []string
	var err error
	switch os.Args[1] {
	case "chart":
		problems, err = cmdChart(os.Args[2:])
	case "config":
		problems, err = cmdConfig(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "helmrender: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "helmrender: %v\n", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "helmrender: %s\n", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

func cmdChart(args []string) ([]string, error) {
	fs := flag.NewFlagSet("chart", flag.ExitOnError)
	dir := fs.String("chart", "", "the chart's directory")
	out := fs.String("out", "", "where to write manifest.yaml, NOTES.txt and config.yaml")
	name := fs.String("release", "hostprof", "the release name")
	ns := fs.String("namespace", "hostprof", "the release namespace")
	version := fs.String("app-version", "", "the appVersion that Chart.yaml must have")
	fs.StringVar(&python, "python", python, "a python3 with PyYAML")
	var files multiFlag
	fs.Var(&files, "f", "a values file, merged over values.yaml (repeatable)")
	fs.Parse(args)
	if *dir == "" || *out == "" || fs.NArg() != 0 {
		return nil, fmt.Errorf("chart: -chart and -out are required")
	}

	c, err := loadChart(*dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	if *version != "" && c.meta["appVersion"] != *version {
		problems = append(problems, fmt.Sprintf("Chart.yaml: appVersion %v, but hostprof is %s",
			c.meta["appVersion"], *version))
	}
	values := c.values
	for _, f := range files {
		override, err := loadYAMLMap(false, f)
		if err != nil {
			return nil, err
		}
		values = coalesce(values, override)
	}
	rel := release{name: *name, namespace: *ns}
	rendered, err := c.render(values, rel)
	if err != nil {
		return nil, fmt.Errorf("render: %v", err)
	}

	if err := os.MkdirAll(*out, 0o755); err != nil {
		return nil, err
	}
	text := manifest(rendered)
	manifestPath := filepath.Join(*out, "manifest.yaml")
	if err := os.WriteFile(manifestPath, []byte(text), 0o644); err != nil {
		return nil, err
	}
	notes := rendered[c.name()+"/templates/NOTES.txt"]
	if strings.TrimSpace(notes) == "" {
		problems = append(problems, "NOTES.txt renders empty")
	}
	if err := os.WriteFile(filepath.Join(*out, "NOTES.txt"), []byte(notes), 0o644); err != nil {
		return nil, err
	}

	parsed, err := loadYAML(true, manifestPath)
	if err != nil {
		return nil, err
	}
	ck := &checker{values: values, rel: rel, chart: c}
	configText := ck.checkManifest(parsed[0], text)
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

func cmdConfig(args []string) ([]string, error) {
	fs := flag.NewFlagSet("config", flag.ExitOnError)
	complete := fs.Bool("complete", false, "every key of the schema must be present")
	unit := fs.String("unit", "", "a systemd unit that runs with this config")
	fs.StringVar(&python, "python", python, "a python3 with PyYAML")
	fs.Parse(args)
	if fs.NArg() == 0 {
		return nil, fmt.Errorf("config: no file given")
	}
	var problems []string
	for _, f := range fs.Args() {
		cfg, err := loadYAMLMap(true, f)
		if err != nil {
			return nil, err
		}
		for _, e := range validateConfig(cfg, *complete) {
			problems = append(problems, f+": "+e)
		}
		if *unit != "" {
			u, err := readUnit(*unit)
			if err != nil {
				return nil, err
			}
			for _, e := range checkUnit(u, cfg) {
				problems = append(problems, *unit+": "+e)
			}
		}
	}
	return problems, nil
}
