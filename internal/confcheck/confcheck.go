// Package confcheck holds configuration checks that need the configuration
// as written, before it is decoded into a component's Config.
package confcheck // import "github.com/otelcol-ttft/otelcol-ttft/internal/confcheck"

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

var durationType = reflect.TypeFor[time.Duration]()

// UnitlessDurations refuses a duration key written as a bare number
// (flush_interval: 15): the collector decodes it as nanoseconds, so a
// 15-second interval becomes a 15 ns busy loop and a 60-second clamp a
// 60 ns one. Zero is allowed (it needs no unit). cfg is a pointer to the
// component's Config; keys are named in the collector's section::key form.
func UnitlessDurations(conf *confmap.Conf, cfg any) error {
	if conf == nil {
		return nil
	}
	var errs []error
	walk(conf.ToStringMap(), reflect.TypeOf(cfg), "", &errs)
	return errors.Join(errs...)
}

// Unmarshal is a component Config's confmap.Unmarshaler: it refuses
// unitless durations (UnitlessDurations), then decodes conf into cfg as the
// collector would.
func Unmarshal(conf *confmap.Conf, cfg any) error {
	if err := UnitlessDurations(conf, cfg); err != nil {
		return err
	}
	return conf.Unmarshal(cfg)
}

func walk(raw any, t reflect.Type, path string, errs *[]error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		if n, ok := number(raw); ok && n != 0 {
			*errs = append(*errs, fmt.Errorf("%s: %v has no unit and would be read as %v: write the unit, e.g. %vs or %vms", path, raw, time.Duration(int64(n)), raw, raw))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if name == "-" {
				continue
			}
			if strings.Contains(opts, "squash") {
				walk(m, f.Type, path, errs)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if v, ok := m[name]; ok {
				walk(v, f.Type, join(path, name), errs)
			}
		}
	case reflect.Slice, reflect.Array:
		l, ok := raw.([]any)
		if !ok {
			return
		}
		for i, v := range l {
			walk(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.Map:
		m, ok := raw.(map[string]any)
		if !ok {
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(m[k], t.Elem(), join(path, k), errs)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "::" + key
}

// number reports whether v is a YAML number, and its value.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
