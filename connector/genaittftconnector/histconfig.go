package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// How the first point of a cumulative histogram series is treated.
const (
	initialAuto = "auto"
	initialKeep = "keep"
	initialDrop = "drop"
)

// HistogramsConfig is the metrics→metrics input: TTFT histograms that
// gateways and servers already export (README: "Histogram inputs";
// docs/architecture.md §3, "Histogram inputs and gateway rows").
type HistogramsConfig struct {
	// Sources are recognised metrics beyond the built-in table; a source
	// whose metric name is built in replaces that row.
	Sources []HistogramSource `mapstructure:"sources"`
	// InitialValue decides whether the first point of a cumulative series
	// counts: auto counts it only when its start time is known and not
	// before the connector started, or, without a start time, when an
	// earlier scrape of its target lacked the series (so none of its samples
	// are older than this collector); keep always; drop never (it is the
	// baseline).
	InitialValue string `mapstructure:"initial_value"`
	// StaleAfter forgets a source series not seen for longer; when it
	// returns, its next point is a first point again. Staleness markers do
	// not forget it.
	StaleAfter time.Duration `mapstructure:"stale_after"`
	// MaxBuckets caps one histogram: explicit layouts with more buckets are
	// rejected, exponential ones are downscaled to fit.
	MaxBuckets int `mapstructure:"max_buckets"`
	// SourceSeriesLimit caps the cumulative series whose last point is
	// kept; points of new series beyond it are dropped and counted.
	SourceSeriesLimit int `mapstructure:"source_series_limit"`
}

// HistogramSource is one row of the table of recognised TTFT histograms.
type HistogramSource struct {
	// Metric is the metric name as it arrives (Prometheus names keep their
	// suffixes and colons: bifrost_stream_first_token_latency_seconds).
	Metric string `mapstructure:"metric"`
	// Unit of the bucket bounds: s or ms. A metric whose own unit is s or ms
	// overrides it.
	Unit string `mapstructure:"unit"`
	// ProviderLabels, ModelLabels, RouteLabels: the first label present
	// with a non-empty value gives gen_ai.provider.name, gen_ai.request.model,
	// ttft.route.
	ProviderLabels []string `mapstructure:"provider_labels"`
	ModelLabels    []string `mapstructure:"model_labels"`
	RouteLabels    []string `mapstructure:"route_labels"`
	// Provider is used when no provider label is present (a vLLM server
	// serves its own models).
	Provider string `mapstructure:"provider"`
	// FailedOverLabel names an integer label; a value > 0 marks the series
	// as a fallback attempt (ttft.failed_over=true).
	FailedOverLabel string `mapstructure:"failed_over_label"`
	// MeasuredAt is where the producer's clock stops: first_content or
	// first_chunk (a lower bound on first content).
	MeasuredAt string `mapstructure:"measured_at"`
	// MeasuredAtByProvider overrides MeasuredAt per provider value: a
	// gateway's clock stops at different events for different upstreams.
	MeasuredAtByProvider map[string]string `mapstructure:"measured_at_by_provider"`
	// Observer is where the clock ran: client, gateway or server.
	Observer string `mapstructure:"observer"`
	// SkipScopes are instrumentation scope name prefixes whose metric of
	// this name is not read (counted as skipped, scope_skipped): a producer
	// that emits the metric with another clock than its name says.
	SkipScopes []string `mapstructure:"skip_scopes"`
}

// skips reports whether the source's metric from scope is not read.
func (s *HistogramSource) skips(scope string) bool {
	for _, p := range s.SkipScopes {
		if strings.HasPrefix(scope, p) {
			return true
		}
	}
	return false
}

// defaultHistogramSources is the built-in table (README: "Histogram inputs").
func defaultHistogramSources() []HistogramSource {
	return []HistogramSource{
		{
			// Bifrost v1.5.11: per attempt, from sending the upstream request to
			// the first chunk it counts. OpenAI: empty and role-only deltas are
			// not chunks (first content, reasoning or tool delta, measured
			// against a fake upstream); Anthropic: message_start. Other
			// providers are not verified: first_chunk, a lower bound.
			Metric: "bifrost_stream_first_token_latency_seconds", Unit: "s",
			ProviderLabels: []string{"provider"}, ModelLabels: []string{"model"},
			RouteLabels: []string{"routing_rule_name"}, FailedOverLabel: "fallback_index",
			MeasuredAt: record.MeasuredAtFirstChunk,
			MeasuredAtByProvider: map[string]string{
				"openai":    record.MeasuredAtFirstContent,
				"anthropic": record.MeasuredAtFirstChunk,
			},
			Observer: record.ObserverGateway,
			// Bifrost's own OTLP push (its otel plugin, meter "bifrost")
			// carries a histogram of this name built from its span
			// attribute, the gap between the first and the second chunk:
			// no TTFT (testdata/fixtures/bifrost-gateway). Scraped, the
			// exposition has no otel_scope_name: the prometheus receiver's
			// scope.
			SkipScopes: []string{"bifrost"},
		},
		{
			// LiteLLM proxy: completionStartTime, its first chunk of any kind.
			Metric: "litellm_llm_api_time_to_first_token_metric", Unit: "s",
			ProviderLabels: []string{"api_provider"}, ModelLabels: []string{"model", "litellm_model_name"},
			MeasuredAt: record.MeasuredAtFirstChunk, Observer: record.ObserverGateway,
		},
		{
			// vLLM: arrival to the first generated token (content), server side.
			Metric: "vllm:time_to_first_token_seconds", Unit: "s", Provider: "vllm",
			ModelLabels: []string{"model_name"},
			MeasuredAt:  record.MeasuredAtFirstContent, Observer: record.ObserverServer,
		},
		{
			// SGLang: arrival to the first generated token, server side.
			Metric: "sglang:time_to_first_token_seconds", Unit: "s", Provider: "sglang",
			ModelLabels: []string{"model_name"},
			MeasuredAt:  record.MeasuredAtFirstContent, Observer: record.ObserverServer,
		},
		{
			// GenAI semconv server metric (OTLP name, then the Prometheus name).
			// Producers differ in what they stop at: first_chunk. OpenLIT, a
			// client library, emits it too, on the client's clock after the
			// response headers, with the values of the
			// gen_ai.client.operation.time_to_first_chunk it also emits (the
			// fixtures' captures): counted there, as a client's.
			Metric: "gen_ai.server.time_to_first_token", Unit: "s",
			ProviderLabels: []string{"gen_ai.provider.name", "gen_ai.system"}, ModelLabels: []string{"gen_ai.request.model", "gen_ai.response.model"},
			MeasuredAt: record.MeasuredAtFirstChunk, Observer: record.ObserverServer,
			SkipScopes: []string{"openlit"},
		},
		{
			// Scraped, the prometheus receiver keeps OpenLIT's scope from
			// otel_scope_name: skipped as above.
			Metric: "gen_ai_server_time_to_first_token_seconds", Unit: "s",
			ProviderLabels: []string{"gen_ai_provider_name", "gen_ai_system"}, ModelLabels: []string{"gen_ai_request_model", "gen_ai_response_model"},
			MeasuredAt: record.MeasuredAtFirstChunk, Observer: record.ObserverServer,
			SkipScopes: []string{"openlit"},
		},
		{
			// GenAI semconv client metric: the first chunk of any kind.
			Metric: "gen_ai.client.operation.time_to_first_chunk", Unit: "s",
			ProviderLabels: []string{"gen_ai.provider.name", "gen_ai.system"}, ModelLabels: []string{"gen_ai.request.model", "gen_ai.response.model"},
			MeasuredAt: record.MeasuredAtFirstChunk, Observer: record.ObserverClient,
		},
		{
			Metric: "gen_ai_client_operation_time_to_first_chunk_seconds", Unit: "s",
			ProviderLabels: []string{"gen_ai_provider_name", "gen_ai_system"}, ModelLabels: []string{"gen_ai_request_model", "gen_ai_response_model"},
			MeasuredAt: record.MeasuredAtFirstChunk, Observer: record.ObserverClient,
		},
	}
}

func defaultHistogramsConfig() HistogramsConfig {
	return HistogramsConfig{
		InitialValue:      initialAuto,
		StaleAfter:        15 * time.Minute,
		MaxBuckets:        1024,
		SourceSeriesLimit: 20000,
	}
}

// table merges the configured sources over the built-in rows, by metric name.
func (h *HistogramsConfig) table() map[string]*HistogramSource {
	t := map[string]*HistogramSource{}
	for _, s := range defaultHistogramSources() {
		t[s.Metric] = &s
	}
	for i := range h.Sources {
		s := h.Sources[i]
		if s.Unit == "" {
			s.Unit = "s"
		}
		t[s.Metric] = &s
	}
	return t
}

var observers = []string{record.ObserverClient, record.ObserverGateway, record.ObserverServer}

// check validates the histograms block; errors name the key and the fix.
func (h *HistogramsConfig) check() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch h.InitialValue {
	case initialAuto, initialKeep, initialDrop:
	default:
		add("histograms::initial_value %q: use auto, keep or drop", h.InitialValue)
	}
	if h.StaleAfter <= 0 {
		add("histograms::stale_after must be > 0, e.g. 15m (got %v)", h.StaleAfter)
	}
	if h.MaxBuckets < 2 {
		add("histograms::max_buckets must be >= 2, e.g. 1024 (got %d): it bounds window memory", h.MaxBuckets)
	}
	if h.SourceSeriesLimit < 1 {
		add("histograms::source_series_limit must be >= 1, e.g. 20000 (got %d): it bounds memory", h.SourceSeriesLimit)
	}
	seen := map[string]int{}
	measured := []string{record.MeasuredAtFirstContent, record.MeasuredAtFirstChunk}
	for i, s := range h.Sources {
		k := fmt.Sprintf("histograms::sources[%d]", i)
		if s.Metric == "" {
			add("%s::metric must name a histogram metric, e.g. bifrost_stream_first_token_latency_seconds", k)
		} else if j, dup := seen[s.Metric]; dup {
			add("%s::metric %q is already listed as sources[%d]: remove the duplicate", k, s.Metric, j)
		} else {
			seen[s.Metric] = i
		}
		if s.Unit != "" && s.Unit != "s" && s.Unit != "ms" {
			add("%s::unit %q: use s or ms", k, s.Unit)
		}
		if !slices.Contains(measured, s.MeasuredAt) {
			add("%s::measured_at %q: use first_content (the clock stops at the first content, reasoning or tool delta) or first_chunk", k, s.MeasuredAt)
		}
		provs := make([]string, 0, len(s.MeasuredAtByProvider))
		for p := range s.MeasuredAtByProvider {
			provs = append(provs, p)
		}
		sort.Strings(provs)
		for _, p := range provs {
			if !slices.Contains(measured, s.MeasuredAtByProvider[p]) {
				add("%s::measured_at_by_provider::%s %q: use first_content or first_chunk", k, p, s.MeasuredAtByProvider[p])
			}
		}
		if !slices.Contains(observers, s.Observer) {
			add("%s::observer %q: use client, gateway or server", k, s.Observer)
		}
		if len(s.ModelLabels) == 0 {
			add("%s::model_labels is empty: name the label that carries the model", k)
		}
		for j, p := range s.SkipScopes {
			if p == "" {
				add("%s::skip_scopes[%d] is empty: it would skip every scope; name a scope prefix, or remove it", k, j)
			}
		}
	}
	return errors.Join(errs...)
}
