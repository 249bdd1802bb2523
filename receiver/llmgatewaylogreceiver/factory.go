// Package llmgatewaylogreceiver implements the llm_gateway_log receiver: it
// tails gateway request logs and CSV exports with pkg/stanza's file input
// and parsers and emits one log record per request carrying the request
// record (ttft.* attributes, ttft.observer=gateway), so the genai_ttft
// connector aggregates gateway-measured TTFT beside spans.
package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/input/file"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// typeStr is the component type; storage checkpoints key on it, never rename.
var typeStr = component.MustNewType("llm_gateway_log")

const stability = component.StabilityLevelAlpha

// stanzaFactory builds the stanza pipeline receiver the factory wraps.
var stanzaFactory = adapter.NewFactory(receiverType{}, stability)

// NewFactory creates the llm_gateway_log receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(typeStr, func() component.Config { return createDefaultConfig() },
		receiver.WithLogs(createLogs, stability))
}

func createLogs(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := stanzaFactory.CreateLogs(ctx, set, cfg, next)
	if err != nil {
		return nil, err
	}
	return &logsReceiver{Logs: r}, nil
}

// logsReceiver makes the stanza receiver's Shutdown idempotent (stanza's
// pipeline reports a second Stop as an error).
type logsReceiver struct {
	receiver.Logs
	shutdownOnce sync.Once
}

func (r *logsReceiver) Shutdown(ctx context.Context) error {
	var err error
	r.shutdownOnce.Do(func() { err = r.Logs.Shutdown(ctx) })
	return err
}

// receiverType plugs the receiver into stanza's adapter.
type receiverType struct{}

var _ adapter.LogReceiverTypeWithScope = receiverType{}

func (receiverType) Type() component.Type { return typeStr }

func (receiverType) ScopeName() string { return scopeName }

func (receiverType) CreateDefaultConfig() component.Config { return createDefaultConfig() }

func createDefaultConfig() *Config {
	in := file.NewConfig()
	// Exports written before start-up are read (docs/architecture.md §8).
	in.StartAt = "beginning"
	// A row is emitted at its line end only: stanza's 500 ms would emit the
	// first part of a row a buffered writer completes later as a row of its
	// own, and drop both halves (docs/architecture.md §8).
	in.FlushPeriod = 0
	// A line longer than max_log_size is one row cut short, not the first
	// of several: stanza's split would hand its remainder on as rows of
	// their own (text inside a quoted field read as a CSV row). Truncated,
	// the row's first max_log_size bytes are skipped as the bad row they are.
	in.MaxLogSizeBehavior = fileconsumer.MaxLogSizeBehaviorTruncate
	base := adapter.BaseConfig{Operators: []operator.Config{}}
	// filelog's retry intervals (the type lives in a contrib-internal
	// package), but on: stanza moves its checkpoint past rows the next
	// component refused (a memory_limiter under pressure), so unretried
	// they are lost. While it retries, the file is not read on
	// (back-pressure); after max_elapsed_time the rows are dropped.
	base.RetryOnFailure.Enabled = true
	base.RetryOnFailure.InitialInterval = time.Second
	base.RetryOnFailure.MaxInterval = 30 * time.Second
	base.RetryOnFailure.MaxElapsedTime = 5 * time.Minute
	return &Config{
		InputConfig: *in,
		BaseConfig:  base,
		Format:      FormatInfroCSV,
		Delimiter:   ",",
		Derive:      derive.DefaultConfig(),
		Fallbacks:   FallbacksConfig{Wait: time.Minute, MaxPending: 10000},
	}
}

// BaseConfig puts the parser and the mapping ahead of any user operators.
func (receiverType) BaseConfig(cfg component.Config) adapter.BaseConfig {
	c := cfg.(*Config)
	base := c.BaseConfig
	ops, err := operators(c)
	if err != nil {
		// Validate rejects such configs; fail the build rather than run without mapping.
		ops = []operator.Config{operator.NewConfig(&failingConfig{BasicConfig: helper.NewBasicConfig("llm_gateway_log_invalid", "llm_gateway_log_invalid"), err: err})}
	}
	base.Operators = append(ops, c.BaseConfig.Operators...)
	return base
}

// InputConfig is stanza's file input, with the per-file CSV header reader
// for csv formats and record numbers for skipped-row logs.
func (receiverType) InputConfig(cfg component.Config) operator.Config {
	c := cfg.(*Config)
	in := c.InputConfig
	in.IncludeFileRecordNumber = true
	in.IncludeFilePath = true // the resume operator keys its marks on it (and strips it unless asked for)
	if c.csvFormat() {
		if s, err := newSpec(c.Format, c.Mapping); err == nil {
			in.Header = &fileconsumer.HeaderConfig{
				Pattern: headerPattern(c.Delimiter, headerColumns(s)),
				MetadataOperators: []operator.Config{operator.NewConfig(&headerConfig{
					TransformerConfig: helper.NewTransformerConfig(headerOperatorType, headerOperatorType),
					delimiter:         c.Delimiter,
				})},
			}
		}
	}
	return operator.NewConfig(&in)
}

// failingConfig is an operator whose Build reports a configuration error.
type failingConfig struct {
	helper.BasicConfig
	err error
}

func (f *failingConfig) Build(component.TelemetrySettings) (operator.Operator, error) {
	return nil, f.err
}
