package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector/internal/metadata"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// connectors shares one aggregator per configuration between the
// traces→metrics and logs→metrics instances, so spans and gateway records land
// in the same series, behind one ticker and one output.
var connectors = newSharedComponents()

// NewFactory returns the genai_ttft connector factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability),
		connector.WithLogsToMetrics(createLogsToMetrics, metadata.LogsToMetricsStability),
		// scale-out: one log record per call (records.go)
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
		connector.WithMetricsToMetrics(createMetricsToMetrics, metadata.MetricsToMetricsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Derive:                      derive.DefaultConfig(),
		Dimensions:                  []string{record.KeyProvider, record.KeyModel, record.KeyRoute},
		FlushInterval:               15 * time.Second,
		Window:                      24 * time.Hour,
		WindowSlices:                24,
		MinSamples:                  200,
		Quantiles:                   []float64{0.5, 0.9, 0.99, 0.999},
		Policies:                    recommend.DefaultPolicies(),
		Deadlines:                   DeadlinesConfig{Default: 30 * time.Second, Routes: map[string]time.Duration{}, Policy: "first_token"},
		AggregationCardinalityLimit: 5000,
		MetricsExpiration:           time.Hour,
		AggregationTemporality:      temporalityCumulative,
		Censoring:                   true,
		ExponentialHistogramMaxSize: 160,
		IncludeCollectorInstanceID:  true,
		Records:                     defaultRecordsConfig(), // records.go
		Histograms:                  defaultHistogramsConfig(),
	}
}

func createTracesToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	c, err := connectors.getOrAdd(cfg, func() (*ttftConnector, error) {
		return newConnector(set, cfg.(*Config), clockwork.FromContext(ctx), next)
	})
	if err != nil {
		return nil, err
	}
	return &tracesConnector{instance: c}, nil
}

func createMetricsToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	c, err := connectors.getOrAdd(cfg, func() (*ttftConnector, error) {
		return newConnector(set, cfg.(*Config), clockwork.FromContext(ctx), next)
	})
	if err != nil {
		return nil, err
	}
	return &metricsConnector{instance: c}, nil
}

func createLogsToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	c, err := connectors.getOrAdd(cfg, func() (*ttftConnector, error) {
		return newConnector(set, cfg.(*Config), clockwork.FromContext(ctx), next)
	})
	if err != nil {
		return nil, err
	}
	return &logsConnector{instance: c}, nil
}
