package genaittftprocessor // import "github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"

import (
	"context"
	_ "embed" // metadata.yaml
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/owntel"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor/internal/metadata"
)

const (
	signalTraces = iota
	signalLogs
	numSignals
)

var signalNames = [numSignals]string{"traces", "logs"}

// telemetry is the processor's own metrics and rate-limited logs (see
// metadata.yaml). Attribute sets are built once: the hot path allocates
// nothing to count.
type telemetry struct {
	derived  metric.Int64Counter
	skipped  metric.Int64Counter
	nested   metric.Int64Counter
	dropped  metric.Int64Counter
	rejected metric.Int64Counter
	invalid  metric.Int64Counter

	// Options as one-element slices: passing a slice to Add's variadic
	// parameter allocates nothing, a single option escapes per call.
	signalOpts   [numSignals][]metric.AddOption
	reasonOpts   [numSignals][derive.NumReasons][]metric.AddOption
	invalidOpts  [numSignals][record.NumInvalid][]metric.AddOption
	valueOpt     []metric.AddOption
	eventOpt     []metric.AddOption
	untrustedOpt []metric.AddOption

	logger   *zap.Logger
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	lastLog time.Time
	pending derive.Stats // skipped counts not yet logged
}

// metadataYAML lists the own telemetry's names, descriptions and units.
//
//go:embed metadata.yaml
var metadataYAML []byte

func newTelemetry(set component.TelemetrySettings, interval time.Duration) (*telemetry, error) {
	meter := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{logger: set.Logger, interval: interval, now: time.Now}
	err := owntel.Instruments(meter, metadataYAML, map[string]*metric.Int64Counter{
		"processor_genai_ttft_spans_derived":        &t.derived,
		"processor_genai_ttft_spans_skipped":        &t.skipped,
		"processor_genai_ttft_spans_nested":         &t.nested,
		"processor_genai_ttft_chunk_events_dropped": &t.dropped,
		"processor_genai_ttft_evidence_rejected":    &t.rejected,
		"processor_genai_ttft_invalid_records":      &t.invalid,
	}, nil)
	for s := range numSignals {
		for r := range record.NumInvalid {
			t.invalidOpts[s][r] = owntel.AddOpts(attribute.String("signal", signalNames[s]), attribute.String("reason", r.String()))
		}
	}
	for s := range numSignals {
		sig := attribute.String("signal", signalNames[s])
		t.signalOpts[s] = owntel.AddOpts(sig)
		for r := range derive.NumReasons {
			t.reasonOpts[s][r] = owntel.AddOpts(sig, attribute.String("reason", r.String()))
		}
	}
	t.valueOpt = owntel.AddOpts(attribute.String("kind", "value"))
	t.eventOpt = owntel.AddOpts(attribute.String("kind", "event"))
	t.untrustedOpt = owntel.AddOpts(attribute.String("kind", "untrusted_producer"))
	return t, err
}

// report adds one batch's counts and logs skipped input, rate-limited.
func (t *telemetry) report(ctx context.Context, signal int, st *derive.Stats, dropped int64) {
	if n := st.Records - st.Reread; n > 0 {
		t.derived.Add(ctx, n, t.signalOpts[signal]...)
	}
	for r, n := range st.Skipped {
		if n > 0 {
			t.skipped.Add(ctx, n, t.reasonOpts[signal][r]...)
		}
	}
	for r, n := range st.Invalid {
		if n > 0 {
			t.invalid.Add(ctx, n, t.invalidOpts[signal][r]...)
		}
	}
	if st.Nested > 0 {
		t.nested.Add(ctx, st.Nested, t.signalOpts[signal]...)
	}
	if dropped > 0 {
		t.dropped.Add(ctx, dropped)
	}
	if st.ValuesRejected > 0 {
		t.rejected.Add(ctx, st.ValuesRejected, t.valueOpt...)
	}
	if st.EventsIgnored > 0 {
		t.rejected.Add(ctx, st.EventsIgnored, t.eventOpt...)
	}
	if st.Untrusted > 0 {
		t.rejected.Add(ctx, st.Untrusted, t.untrustedOpt...)
	}
	t.maybeLog(signal, st)
}

// maybeLog writes one line per interval about input that could not be
// derived. not_genai is normal traffic and stays out of the logs.
func (t *telemetry) maybeLog(signal int, st *derive.Stats) {
	bad := st.Skipped[derive.ReasonInvalidTiming] + st.ValuesRejected + st.EventsIgnored
	quiet := st.Skipped[derive.ReasonNoEvidence] + st.Skipped[derive.ReasonNotStreamed]
	if bad == 0 && quiet == 0 {
		return
	}
	t.mu.Lock()
	t.pending.Add(*st)
	now := t.now()
	if now.Sub(t.lastLog) < t.interval {
		t.mu.Unlock()
		return
	}
	p := t.pending
	t.pending = derive.Stats{}
	t.lastLog = now
	t.mu.Unlock()

	fields := []zap.Field{
		zap.String("signal", signalNames[signal]),
		zap.Int64(derive.ReasonInvalidTiming.String(), p.Skipped[derive.ReasonInvalidTiming]),
		zap.Int64(derive.ReasonNoEvidence.String(), p.Skipped[derive.ReasonNoEvidence]),
		zap.Int64(derive.ReasonNotStreamed.String(), p.Skipped[derive.ReasonNotStreamed]),
		zap.Int64("values_rejected", p.ValuesRejected),
		zap.Int64("events_ignored", p.EventsIgnored),
		zap.Duration("since_last_report", t.interval),
	}
	if p.Skipped[derive.ReasonInvalidTiming]+p.ValuesRejected+p.EventsIgnored > 0 {
		t.logger.Warn("GenAI spans with unusable timing evidence; their records carry no TTFT", fields...)
		return
	}
	t.logger.Debug("GenAI calls without TTFT evidence", fields...)
}
