package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// Go's standard library has no YAML parser, so YAML is read by PyYAML (Debian's python3-yaml,
// which yamllint depends on) and handed over as JSON. PyYAML reads YAML 1.1, as Helm and
// Kubernetes do (sigs.k8s.io/yaml): "yes", "on" and 0400 mean there what they mean to them.
const yamlToJSON = `
import json, sys
try:
    import yaml
except ImportError:
    sys.exit("chartcheck: PyYAML is missing: install python3-yaml (yamllint brings it)")
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
out = []
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            out.append(list(yaml.load_all(f, Loader=Loader)))
    except yaml.YAMLError as e:
        sys.exit("%s: %s" % (path, e))
try:
    json.dump(out, sys.stdout, allow_nan=False)
except (TypeError, ValueError) as e:
    sys.exit("a value has no JSON form (a date? NaN?): %s" % e)
`

// python is the interpreter that has PyYAML (-python).
var python = "python3"

// loadYAML parses each file and returns its documents. With numbers set, numbers are
// json.Number, so that an int and a float stay apart (the checks); otherwise they are float64,
// as Helm's values are.
func loadYAML(numbers bool, paths ...string) ([][]interface{}, error) {
	cmd := exec.Command(python, append([]string{"-c", yamlToJSON}, paths...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("reading YAML: %s", msg)
	}
	dec := json.NewDecoder(&stdout)
	if numbers {
		dec.UseNumber()
	}
	var files [][]interface{}
	if err := dec.Decode(&files); err != nil {
		return nil, fmt.Errorf("reading YAML: the JSON from %s: %v", python, err)
	}
	if len(files) != len(paths) {
		return nil, fmt.Errorf("reading YAML: %d files in, %d out", len(paths), len(files))
	}
	return files, nil
}

// loadYAMLMap reads a file that holds one mapping (a values file, Chart.yaml, a config file).
// An empty file is an empty mapping.
func loadYAMLMap(numbers bool, path string) (map[string]interface{}, error) {
	files, err := loadYAML(numbers, path)
	if err != nil {
		return nil, err
	}
	docs := files[0]
	if len(docs) == 0 || (len(docs) == 1 && docs[0] == nil) {
		return map[string]interface{}{}, nil
	}
	if len(docs) > 1 {
		return nil, fmt.Errorf("%s: %d YAML documents, want one", path, len(docs))
	}
	m, ok := docs[0].(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("%s: the document is not a mapping", path)
	}
	return m, nil
}
