package e2eload

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"
)

// benchRequests is how many of the sender's requests one benchmark batch
// holds: pipeline (b)'s processor sees one request at a time, its connector
// what the batch processor made of about two (5,000 spans/s, 200 ms).
const benchRequests = 2

// mixBatches is one request as the processor receives it, and what the
// connector receives after the processor and the batch processor: the
// stamped spans of benchRequests requests, one ResourceSpans each.
func mixBatches(tb testing.TB, mix Mix, now time.Time) (request, stamped ptrace.Traces) {
	bodies, err := Bodies(mix, 500, benchRequests, now)
	require.NoError(tb, err)
	p := newProcessor(tb)
	stamped = ptrace.NewTraces()
	var u ptrace.ProtoUnmarshaler
	for i, b := range bodies {
		td, err := u.UnmarshalTraces(b.Data)
		require.NoError(tb, err)
		if i == 0 {
			request = ptrace.NewTraces()
			td.CopyTo(request)
		}
		require.NoError(tb, p.ConsumeTraces(context.Background(), td))
		td.ResourceSpans().MoveAndAppendTo(stamped.ResourceSpans())
	}
	return request, stamped
}

type nopHost struct{}

func (nopHost) GetExtensions() map[component.ID]component.Component { return nil }

func newProcessor(tb testing.TB) interface {
	ConsumeTraces(context.Context, ptrace.Traces) error
} {
	f := genaittftprocessor.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(tb, unmarshalDerive(cfg))
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	require.NoError(tb, p.Start(context.Background(), nopHost{}))
	tb.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// newConnector's clock stands still at now: no flush runs while it is
// measured. stampedOnly is pipeline (b)'s setting; without it the
// connector scans every span as (bd) does.
func newConnector(tb testing.TB, now time.Time, stampedOnly bool) interface {
	ConsumeTraces(context.Context, ptrace.Traces) error
} {
	f := genaittftconnector.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(tb, unmarshalDerive(cfg))
	require.NoError(tb, confmap.NewFromStringMap(map[string]any{"stamped_only": stampedOnly}).Unmarshal(cfg))
	ctx := clockwork.AddToContext(context.Background(), clockwork.NewFakeClockAt(now))
	c, err := f.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	require.NoError(tb, c.Start(context.Background(), nopHost{}))
	tb.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

// newDeriver is the processor's derivation alone (no stamping): it leaves
// the batch as it is, so it runs on the same one each time, with no copy.
func newDeriver(tb testing.TB) func(context.Context, ptrace.Traces) error {
	cfg := derive.DefaultConfig()
	cfg.PromptBands = []int64{2000, 16000, 64000}
	cfg.RouteAttribute = "ttft.route"
	d, err := derive.New(cfg)
	require.NoError(tb, err)
	return func(_ context.Context, td ptrace.Traces) error {
		d.TracesWith(td, derive.TraceVisitor{})
		return nil
	}
}

// BenchmarkMix runs pipeline (b)'s two components on the benchmark's own
// request bodies, per mix: the processor on one request (500 spans), the
// connector on the stamped output of two (connector_derives: without
// stamped_only, as in (bd)), and the processor's derivation alone (derive)
// on the request. The processor writes attributes,
// so each of its iterations gets a fresh copy of the request: subtract
// BenchmarkMix/<mix>/copy, the same loop without the processor. The
// connector only reads its input and runs on the same batch each time.
func BenchmarkMix(b *testing.B) {
	for _, mix := range Mixes {
		now := time.Now()
		request, stamped := mixBatches(b, mix, now)
		// Each component is made in its sub-benchmark, so none of another's
		// goroutines runs while one is measured.
		run := func(name string, src ptrace.Traces, copyInput bool, newConsume func(testing.TB) func(context.Context, ptrace.Traces) error) {
			b.Run(mix.Name+"/"+name, func(b *testing.B) {
				var consume func(context.Context, ptrace.Traces) error
				if newConsume != nil {
					consume = newConsume(b)
				}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					td := src
					if copyInput {
						// The copy alone is timed (the same calls in
						// another order): with nothing timed, b.N would
						// grow towards a billion copies.
						b.StopTimer()
						if consume == nil {
							b.StartTimer()
						}
						td = ptrace.NewTraces()
						src.CopyTo(td)
						if consume != nil {
							b.StartTimer()
						}
					}
					if consume != nil {
						if err := consume(ctx, td); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(src.SpanCount()), "ns/span")
			})
		}
		run("copy", request, true, nil)
		run("derive", request, false, newDeriver)
		run("processor", request, true, func(tb testing.TB) func(context.Context, ptrace.Traces) error {
			return newProcessor(tb).ConsumeTraces
		})
		run("connector", stamped, false, func(tb testing.TB) func(context.Context, ptrace.Traces) error {
			return newConnector(tb, now, true).ConsumeTraces
		})
		run("connector_derives", stamped, false, func(tb testing.TB) func(context.Context, ptrace.Traces) error {
			return newConnector(tb, now, false).ConsumeTraces
		})
	}
}

// unmarshalDerive sets the derive settings pipeline (b) runs with
// (collector.go).
func unmarshalDerive(cfg component.Config) error {
	return confmap.NewFromStringMap(map[string]any{
		"derive": map[string]any{
			"prompt_bands":    []any{2000, 16000, 64000},
			"route_attribute": "ttft.route",
		},
	}).Unmarshal(cfg)
}
