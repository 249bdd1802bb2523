// Package floorconnector is the ttft_floor connector of the end-to-end
// benchmark's floor pipeline (see package floor): one Map.Get a span for
// the record, and on a record one more for its TTFT.
package floorconnector // import "github.com/otelcol-ttft/otelcol-ttft/bench/floor/floorconnector"

import (
	"context"
	"math"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/bench/floor"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// NewFactory returns the ttft_floor connector factory (traces → metrics).
func NewFactory() connector.Factory {
	return connector.NewFactory(floor.Type,
		floor.NewConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, component.StabilityLevelDevelopment))
}

func createTracesToMetrics(context.Context, connector.Settings, component.Config, consumer.Metrics) (connector.Traces, error) {
	return &Connector{}, nil
}

// Connector counts the records it reads and sums their TTFT; it emits no
// metric.
type Connector struct {
	records atomic.Int64
	sumBits atomic.Uint64 // float64 bits of the TTFT sum
}

// Start does nothing.
func (*Connector) Start(context.Context, component.Host) error { return nil }

// Shutdown does nothing.
func (*Connector) Shutdown(context.Context) error { return nil }

// Capabilities: the connector only reads.
func (*Connector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeTraces reads the records of td.
func (c *Connector) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	var n int64
	var sum float64
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				attrs := spans.At(k).Attributes()
				if _, ok := attrs.Get(record.KeyOutcome); !ok {
					continue
				}
				n++
				if v, ok := attrs.Get(record.KeyTimeToFirstContent); ok && v.Type() == pcommon.ValueTypeDouble {
					sum += v.Double()
				}
			}
		}
	}
	if n > 0 {
		c.records.Add(n)
		for {
			old := c.sumBits.Load()
			if c.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+sum)) {
				break
			}
		}
	}
	return nil
}

// Records is how many records the connector has read, and the sum of
// their times to first content in seconds.
func (c *Connector) Records() (int64, float64) {
	return c.records.Load(), math.Float64frombits(c.sumBits.Load())
}
