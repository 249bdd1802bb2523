package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	_ "embed" // metadata.yaml
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/owntel"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// telemetry is the connector's own metrics (see metadata.yaml).
type telemetry struct {
	records     metric.Int64Counter
	skipped     metric.Int64Counter
	overflowed  metric.Int64Counter
	series      metric.Int64Gauge
	rateLimited metric.Int64Counter
	histPoints  metric.Int64Counter
	invalid     metric.Int64Counter
	outOfRange  metric.Int64Counter
	refused     metric.Int64Counter
	evidence    metric.Int64Counter

	// The sets by series kind and by invalid reason, made up front, as
	// one-element slices like sets below.
	kindAdd      [numSeriesKinds][]metric.AddOption
	kindRecord   [numSeriesKinds][]metric.RecordOption
	invalidAttrs [record.NumInvalid][]metric.AddOption

	// sets holds the attribute set of each (key, value, key, value) a
	// report has used, built on first use: metric.WithAttributes builds,
	// sorts and hashes a new set, with allocations, on every call
	// (BenchmarkTelemetryReport). Keys and values are the code's own
	// constants (signals, skip reasons, point results), never a sender's
	// input, so it holds a few dozen sets at most. Each is kept as a
	// one-element slice: passed to Add's variadic parameter it allocates
	// nothing, where a single option escapes on every call.
	setsMu sync.RWMutex
	sets   map[attrPair][]metric.AddOption
}

// attrPair names one or two attributes: signal and reason, or result.
type attrPair struct{ k1, v1, k2, v2 string }

// attrs is the Add options of the attributes p names, built once.
func (t *telemetry) attrs(p attrPair) []metric.AddOption {
	t.setsMu.RLock()
	o, ok := t.sets[p]
	t.setsMu.RUnlock()
	if ok {
		return o
	}
	kv := []attribute.KeyValue{attribute.String(p.k1, p.v1)}
	if p.k2 != "" {
		kv = append(kv, attribute.String(p.k2, p.v2))
	}
	o = owntel.AddOpts(kv...)
	t.setsMu.Lock()
	defer t.setsMu.Unlock()
	if t.sets == nil {
		t.sets = map[attrPair][]metric.AddOption{}
	}
	t.sets[p] = o
	return o
}

// metadataYAML lists the own telemetry's names, descriptions and units.
//
//go:embed metadata.yaml
var metadataYAML []byte

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	t := &telemetry{}
	err := owntel.Instruments(set.MeterProvider.Meter(metadata.ScopeName), metadataYAML, map[string]*metric.Int64Counter{
		"connector_genai_ttft_records":                    &t.records,
		"connector_genai_ttft_skipped":                    &t.skipped,
		"connector_genai_ttft_overflowed":                 &t.overflowed,
		"connector_genai_ttft_logs_rate_limited":          &t.rateLimited,
		"connector_genai_ttft_histogram_points":           &t.histPoints,
		"connector_genai_ttft_invalid_records":            &t.invalid,
		"connector_genai_ttft_window_values_out_of_range": &t.outOfRange,
		"connector_genai_ttft_points_refused":             &t.refused,
		"connector_genai_ttft_evidence_rejected":          &t.evidence,
	}, map[string]*metric.Int64Gauge{
		"connector_genai_ttft_series": &t.series,
	})
	for i := range record.NumInvalid {
		t.invalidAttrs[i] = owntel.AddOpts(attribute.String("reason", i.String()))
	}
	for i, n := range seriesKindNames {
		kind := owntel.Attrs(attribute.String("kind", n))
		t.kindAdd[i], t.kindRecord[i] = []metric.AddOption{kind}, []metric.RecordOption{kind}
	}
	return t, err
}

// reportEvidence counts the evidence the connector's own derivation
// refused (spans or log records with no processor in front), as the
// processor's evidence_rejected does.
func (t *telemetry) reportEvidence(ctx context.Context, signal string, ds *derive.Stats) {
	for _, kv := range [...]struct {
		kind string
		n    int64
	}{{"value", ds.ValuesRejected}, {"event", ds.EventsIgnored}, {"untrusted_producer", ds.Untrusted}} {
		if kv.n > 0 {
			t.evidence.Add(ctx, kv.n, t.attrs(attrPair{"signal", signal, "kind", kv.kind})...)
		}
	}
}

// report adds one batch's counts; called outside the connector lock.
func (t *telemetry) report(ctx context.Context, signal string, st *batchStats) {
	if st.records > 0 {
		t.records.Add(ctx, st.records, t.attrs(attrPair{k1: "signal", v1: signal})...)
	}
	for reason, n := range st.skipped.all {
		t.skipped.Add(ctx, n, t.attrs(attrPair{"signal", signal, "reason", reason})...)
	}
	for k, n := range st.overflowed {
		if n > 0 {
			t.overflowed.Add(ctx, n, t.kindAdd[k]...)
		}
	}
	for why, n := range st.invalid {
		if n > 0 {
			t.invalid.Add(ctx, n, t.invalidAttrs[why]...)
		}
	}
	if st.logsLimited > 0 {
		t.rateLimited.Add(ctx, st.logsLimited)
	}
}

// reportHistPoints adds one metrics batch's data point results.
func (t *telemetry) reportHistPoints(ctx context.Context, points map[string]int64) {
	for result, n := range points {
		t.histPoints.Add(ctx, n, t.attrs(attrPair{k1: "result", v1: result})...)
	}
}

func (t *telemetry) reportSeries(ctx context.Context, n [numSeriesKinds]int64) {
	for k, v := range n {
		t.series.Record(ctx, v, t.kindRecord[k]...)
	}
}
