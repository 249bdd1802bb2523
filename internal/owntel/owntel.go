// Package owntel builds the own telemetry of the project's components
// (docs/architecture.md §10: bad input is counted by reason, through the
// collector's MeterProvider). A component's metadata.yaml is the one list
// of its instruments, as for mdatagen: name (without the otelcol_ prefix,
// which is added here, as mdatagen does), description, unit and type; the
// component binds names to its fields. Attribute sets are built once, so
// counting on the hot path allocates nothing. Warnings about bad input are
// logged at a bounded rate (WarnLimiter).
package owntel // import "github.com/otelcol-ttft/otelcol-ttft/internal/owntel"

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"
)

// Prefix is what the collector's own metrics are named with.
const Prefix = "otelcol_"

// Metric is one entry of metadata.yaml's telemetry.metrics.
type Metric struct {
	Description string    `yaml:"description"`
	Unit        string    `yaml:"unit"`
	Sum         *struct{} `yaml:"sum"`
	Gauge       *struct{} `yaml:"gauge"`
}

// Metadata reads the telemetry.metrics of a component's metadata.yaml.
func Metadata(metadataYAML []byte) (map[string]Metric, error) {
	var md struct {
		Telemetry struct {
			Metrics map[string]Metric `yaml:"metrics"`
		} `yaml:"telemetry"`
	}
	if err := yaml.Unmarshal(metadataYAML, &md); err != nil {
		return nil, fmt.Errorf("metadata.yaml: %w", err)
	}
	return md.Telemetry.Metrics, nil
}

// Instruments creates the counters and gauges metadata.yaml lists under
// the names given (keys without the otelcol_ prefix) and stores each in
// its field. A name metadata.yaml does not list, or lists as another type
// (a counter needs its sum block, a gauge its gauge block, neither both), is
// an error: code and metadata cannot drift apart.
func Instruments(meter metric.Meter, metadataYAML []byte, counters map[string]*metric.Int64Counter, gauges map[string]*metric.Int64Gauge) error {
	md, err := Metadata(metadataYAML)
	if err != nil {
		return err
	}
	var errs []error
	lookup := func(name string, gauge bool) (Metric, bool) {
		m, ok := md[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("own telemetry %s is not in metadata.yaml", name))
		case gauge && (m.Gauge == nil || m.Sum != nil), !gauge && (m.Sum == nil || m.Gauge != nil):
			errs = append(errs, fmt.Errorf("own telemetry %s: metadata.yaml gives another type", name))
			ok = false
		}
		return m, ok
	}
	for _, name := range sortedKeys(counters) {
		if m, ok := lookup(name, false); ok {
			var e error
			*counters[name], e = meter.Int64Counter(Prefix+name, metric.WithDescription(m.Description), metric.WithUnit(m.Unit))
			errs = append(errs, e)
		}
	}
	for _, name := range sortedKeys(gauges) {
		if m, ok := lookup(name, true); ok {
			var e error
			*gauges[name], e = meter.Int64Gauge(Prefix+name, metric.WithDescription(m.Description), metric.WithUnit(m.Unit))
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Attrs is the measurement option of the attribute set kv, built once.
func Attrs(kv ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}

// AddOpts is Attrs as a one-element slice: passing a slice to Add's variadic
// parameter allocates nothing, a single option escapes per call.
func AddOpts(kv ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{Attrs(kv...)}
}

// WarnLimiter lets one warning per key through per interval, so a flood of
// bad input cannot flood the log; the caller counts the rest.
type WarnLimiter struct {
	mu       sync.Mutex
	interval time.Duration
	last     map[string]time.Time
}

// NewWarnLimiter returns a limiter of one warning per key per interval.
func NewWarnLimiter(interval time.Duration) *WarnLimiter {
	return &WarnLimiter{interval: interval, last: map[string]time.Time{}}
}

// Allow reports whether a warning of key is due: none was let through
// within the interval. A true answer counts as the key's warning. Callers
// on a path taken every batch log only when it says so: the fields of a
// warning escape to the logger, so building them costs an allocation even
// when Warn then suppresses it.
func (l *WarnLimiter) Allow(now time.Time, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if last, ok := l.last[key]; ok && now.Sub(last) < l.interval {
		return false
	}
	l.last[key] = now
	return true
}

// Warn logs msg unless key was logged within the interval; it reports
// whether the warning was suppressed.
func (l *WarnLimiter) Warn(logger *zap.Logger, now time.Time, key, msg string, fields ...zap.Field) (suppressed bool) {
	if !l.Allow(now, key) {
		return true
	}
	logger.Warn(msg, fields...)
	return false
}
