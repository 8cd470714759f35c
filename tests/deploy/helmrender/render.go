package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
)

// A chart as `helm template` sees it: Chart.yaml, values.yaml, templates/ (no subcharts, no
// .Files, no .Capabilities: the chart uses none of them, and a template that tries fails).
type chart struct {
	dir       string
	meta      map[string]interface{}
	values    map[string]interface{}
	templates map[string]string // "<chart>/templates/<file>" -> text
}

func loadChart(dir string) (*chart, error) {
	meta, err := loadYAMLMap(false, filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"apiVersion", "name", "version"} {
		if s, _ := meta[k].(string); s == "" {
			return nil, fmt.Errorf("Chart.yaml: %s is missing", k)
		}
	}
	if meta["apiVersion"] != "v2" {
		return nil, fmt.Errorf("Chart.yaml: apiVersion %v, want v2", meta["apiVersion"])
	}
	values, err := loadYAMLMap(false, filepath.Join(dir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	c := &chart{dir: dir, meta: meta, values: values, templates: map[string]string{}}
	tdir := filepath.Join(dir, "templates")
	err = filepath.Walk(tdir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		c.templates[c.name()+"/"+filepath.ToSlash(rel)] = string(text)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(c.templates) == 0 {
		return nil, fmt.Errorf("%s: no templates", tdir)
	}
	return c, nil
}

func (c *chart) name() string { return c.meta["name"].(string) }

// chartObject is .Chart: Helm's Chart.yaml fields under their Go names.
func (c *chart) chartObject() map[string]interface{} {
	get := func(k string) interface{} {
		if v, ok := c.meta[k]; ok {
			return v
		}
		return ""
	}
	return map[string]interface{}{
		"Name": get("name"), "Version": get("version"), "AppVersion": get("appVersion"),
		"Description": get("description"), "Type": get("type"), "APIVersion": get("apiVersion"),
		"Keywords": get("keywords"),
	}
}

// coalesce merges override into base as helm -f does: mappings merge key by key, anything
// else replaces, and null deletes the key.
func coalesce(base, override map[string]interface{}) map[string]interface{} {
	out := deepCopy(base).(map[string]interface{})
	for k, v := range override {
		if v == nil {
			delete(out, k)
			continue
		}
		bm, bok := out[k].(map[string]interface{})
		om, ook := v.(map[string]interface{})
		if bok && ook {
			out[k] = coalesce(bm, om)
		} else {
			out[k] = deepCopy(v)
		}
	}
	return out
}

type release struct {
	name, namespace string
}

// render executes every template and returns the output of those whose name does not start
// with "_", by template name. Stricter than Helm on purpose: a value that values.yaml does not
// define is an error (missingkey=error) instead of an empty string, and so is "<no value>".
func (c *chart) render(values map[string]interface{}, rel release) (map[string]string, error) {
	root := template.New("chart").Option("missingkey=error")
	depth := 0
	funcs := helmFuncs()
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if depth++; depth > 100 {
			return "", fmt.Errorf("include %q: nested more than 100 deep", name)
		}
		defer func() { depth-- }()
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	root.Funcs(funcs)

	names := make([]string, 0, len(c.templates))
	for name := range c.templates {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := root.New(name).Parse(c.templates[name]); err != nil {
			return nil, err
		}
	}

	out := map[string]string{}
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "_") {
			continue
		}
		data := map[string]interface{}{
			"Values": values,
			"Chart":  c.chartObject(),
			"Release": map[string]interface{}{
				"Name": rel.name, "Namespace": rel.namespace, "Service": "Helm",
				"IsInstall": true, "IsUpgrade": false, "Revision": 1,
			},
			"Template": map[string]interface{}{
				"Name": name, "BasePath": c.name() + "/templates",
			},
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return nil, err
		}
		if strings.Contains(buf.String(), "<no value>") {
			return nil, fmt.Errorf("%s: renders <no value> (a nil value printed)", name)
		}
		out[name] = buf.String()
	}
	return out, nil
}

// manifest joins the rendered files as `helm template` prints them; NOTES.txt is not part of it.
func manifest(rendered map[string]string) string {
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		if strings.HasSuffix(name, "/NOTES.txt") {
			continue
		}
		body := strings.Trim(rendered[name], "\n")
		if strings.TrimSpace(body) == "" {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, body)
	}
	return b.String()
}
