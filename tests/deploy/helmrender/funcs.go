package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

// The subset of Helm's template functions (Helm's own and Sprig's) that the chart uses, with
// their semantics. A template that calls anything else fails to parse: keep the chart to this
// list, or add the function here, with Helm's behaviour. `include` is added by the renderer.
func helmFuncs() template.FuncMap {
	return template.FuncMap{
		"default":    dfault,
		"required":   required,
		"toYaml":     toYaml,
		"nindent":    nindent,
		"indent":     indent,
		"quote":      quote,
		"b64enc":     b64enc,
		"trunc":      trunc,
		"trimSuffix": trimSuffix,
		"deepCopy":   deepCopy,
		"set":        set,
		"sha256sum":  sha256sum,
	}
}

// strval is Sprig's conversion of any value to a string.
func strval(v interface{}) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	case error:
		return s.Error()
	case fmt.Stringer:
		return s.String()
	default:
		return fmt.Sprintf("%v", v)
	}
}

// empty is Sprig's notion of an unset value: nil, false, 0, "", and empty maps and lists.
func empty(given interface{}) bool {
	g := reflect.ValueOf(given)
	if !g.IsValid() {
		return true
	}
	switch g.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return g.Len() == 0
	case reflect.Bool:
		return !g.Bool()
	case reflect.Complex64, reflect.Complex128:
		return g.Complex() == 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return g.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return g.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return g.Float() == 0
	case reflect.Struct:
		return false
	default:
		return g.IsNil()
	}
}

// default DEFAULT VALUE: VALUE unless it is empty.
func dfault(d interface{}, given ...interface{}) interface{} {
	if len(given) == 0 || empty(given[0]) {
		return d
	}
	return given[0]
}

// required MESSAGE VALUE: fails the render with MESSAGE when VALUE is nil or "".
func required(msg string, val interface{}) (interface{}, error) {
	if val == nil {
		return nil, errors.New(msg)
	}
	if s, ok := val.(string); ok && s == "" {
		return nil, errors.New(msg)
	}
	return val, nil
}

func indent(spaces int, v string) string {
	pad := strings.Repeat(" ", spaces)
	return pad + strings.ReplaceAll(v, "\n", "\n"+pad)
}

func nindent(spaces int, v string) string {
	return "\n" + indent(spaces, v)
}

// quote: each argument as a Go double-quoted string, which is also a YAML double-quoted one.
func quote(str ...interface{}) string {
	out := make([]string, 0, len(str))
	for _, s := range str {
		if s != nil {
			out = append(out, strconv.Quote(strval(s)))
		}
	}
	return strings.Join(out, " ")
}

func b64enc(v interface{}) string {
	return base64.StdEncoding.EncodeToString([]byte(strval(v)))
}

func trunc(c int, s string) string {
	if c < 0 && len(s)+c > 0 {
		return s[len(s)+c:]
	}
	if c >= 0 && len(s) > c {
		return s[:c]
	}
	return s
}

func trimSuffix(suffix, s string) string {
	return strings.TrimSuffix(s, suffix)
}

func sha256sum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// deepCopy copies the maps and lists of a values tree, so that set on the copy leaves the
// original alone.
func deepCopy(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []interface{}:
		l := make([]interface{}, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	default:
		return v
	}
}

// set MAP KEY VALUE: stores in place and returns the map.
func set(d map[string]interface{}, key string, value interface{}) (map[string]interface{}, error) {
	if d == nil {
		return nil, fmt.Errorf("set %q: the map is null", key)
	}
	d[key] = value
	return d, nil
}

// toYaml writes a value as block YAML, without the last newline, as Helm does: keys sorted,
// lists of a mapping's key at the key's own indentation, {} and [] for empty ones. Strings are
// plain only when no YAML 1.1 reader could take them for anything but a string; otherwise
// double-quoted.
func toYaml(v interface{}) (string, error) {
	var b strings.Builder
	if err := emitBlock(&b, v, 0); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func emitBlock(b *strings.Builder, v interface{}, ind int) error {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Interface {
		rv = rv.Elem()
	}
	pad := strings.Repeat(" ", ind)
	switch {
	case rv.IsValid() && rv.Kind() == reflect.Map && rv.Len() > 0:
		keys := make([]string, 0, rv.Len())
		vals := map[string]reflect.Value{}
		for _, k := range rv.MapKeys() {
			if k.Kind() != reflect.String {
				return fmt.Errorf("toYaml: a key of type %s", k.Type())
			}
			keys = append(keys, k.String())
			vals[k.String()] = rv.MapIndex(k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child := vals[k].Interface()
			b.WriteString(pad + yamlString(k) + ":")
			cv := reflect.ValueOf(child)
			switch {
			case cv.IsValid() && cv.Kind() == reflect.Map && cv.Len() > 0:
				b.WriteString("\n")
				if err := emitBlock(b, child, ind+2); err != nil {
					return err
				}
			case cv.IsValid() && (cv.Kind() == reflect.Slice || cv.Kind() == reflect.Array) &&
				cv.Len() > 0:
				b.WriteString("\n")
				if err := emitBlock(b, child, ind); err != nil {
					return err
				}
			default:
				s, err := yamlScalar(child)
				if err != nil {
					return err
				}
				b.WriteString(" " + s + "\n")
			}
		}
		return nil
	case rv.IsValid() && (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Len() > 0:
		for i := 0; i < rv.Len(); i++ {
			// The item is written two columns in, then its first line's indentation is
			// replaced by the dash: "- a: 1\n  b: 2", "- - x".
			var item strings.Builder
			if err := emitBlock(&item, rv.Index(i).Interface(), ind+2); err != nil {
				return err
			}
			b.WriteString(pad + "- " + item.String()[ind+2:])
		}
		return nil
	default:
		s, err := yamlScalar(v)
		if err != nil {
			return err
		}
		b.WriteString(pad + s + "\n")
		return nil
	}
}

var plainString = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./:@+-]*$`)

// The words that YAML 1.1 readers (go-yaml v2, PyYAML) turn into booleans or null.
var yaml11Words = map[string]bool{
	"y": true, "yes": true, "n": true, "no": true, "true": true, "false": true,
	"on": true, "off": true, "null": true,
}

func yamlString(s string) string {
	if plainString.MatchString(s) && !yaml11Words[strings.ToLower(s)] &&
		!strings.HasSuffix(s, ":") {
		return s
	}
	return strconv.Quote(s)
}

func yamlScalar(v interface{}) (string, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return "null", nil
	}
	switch t := v.(type) {
	case string:
		return yamlString(t), nil
	case bool:
		return strconv.FormatBool(t), nil
	case json.Number:
		return t.String(), nil
	case float64:
		return formatFloat(t), nil
	case float32:
		return formatFloat(float64(t)), nil
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.Map:
		return "{}", nil
	case reflect.Slice, reflect.Array:
		return "[]", nil
	}
	return "", fmt.Errorf("toYaml: cannot write a %T", v)
}

// formatFloat writes a number as JSON would (Helm's toYaml goes through JSON): integers
// without a fraction or an exponent.
func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
