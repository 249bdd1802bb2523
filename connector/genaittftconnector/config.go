package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/confcheck"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

const (
	temporalityCumulative = "cumulative"
	temporalityDelta      = "delta"
)

// Config is the genai_ttft connector configuration (docs/architecture.md §8). Keys are
// stable: add, never rename.
type Config struct {
	// Derive is the same block the genai_ttft processor accepts; it is used
	// when spans or log records arrive without ttft.* attributes.
	Derive derive.Config `mapstructure:"derive"`
	// StampedOnly reads only records stamped upstream (by the genai_ttft
	// processor or the llm_gateway_log receiver) and derives none here: a
	// span without ttft.outcome or ttft.nested_in costs a length test per
	// attribute instead of the derivation's scan (docs/architecture.md,
	// "The connector behind the processor").
	StampedOnly bool `mapstructure:"stamped_only"`
	// Dimensions are attribute names added to every series. Values come from
	// the request record (provider, model, route), then the span or log
	// attributes, then the resource attributes; a missing value is omitted.
	Dimensions []string `mapstructure:"dimensions"`
	// FlushInterval is how often metrics are emitted.
	FlushInterval time.Duration `mapstructure:"flush_interval"`
	// Window is the span of time recommendations and quantiles look back.
	Window time.Duration `mapstructure:"window"`
	// WindowSlices is how many slices the window rotates through; the window
	// advances one slice at a time.
	WindowSlices int `mapstructure:"window_slices"`
	// MinSamples is the least number of successful samples a quantile needs;
	// quantile q needs max(min_samples, ceil(1/(1-q))).
	MinSamples int `mapstructure:"min_samples"`
	// Quantiles are the ttft.quantile gauges emitted.
	Quantiles []float64 `mapstructure:"quantiles"`
	// Policies turn windowed quantiles into ttft.timeout.recommended.
	Policies []recommend.Policy `mapstructure:"policies"`
	// Deadlines are the callers' total deadlines for ttft.deadline.margin.
	Deadlines DeadlinesConfig `mapstructure:"deadlines"`
	// AggregationCardinalityLimit caps the series per metric; records beyond
	// it land in one overflow series marked otel.metric.overflow=true.
	AggregationCardinalityLimit int `mapstructure:"aggregation_cardinality_limit"`
	// MetricsExpiration drops series (and their windows) idle for longer; 0
	// keeps them forever.
	MetricsExpiration time.Duration `mapstructure:"metrics_expiration"`
	// AggregationTemporality is cumulative or delta.
	AggregationTemporality string `mapstructure:"aggregation_temporality"`
	// Censoring enters timeout_first_token requests into the estimates as
	// right-censored observations (docs/architecture.md §2). Turning it off makes
	// recommendations ratchet down once a timeout is enforced.
	Censoring bool `mapstructure:"censoring"`
	// ExponentialHistogramMaxSize is the bucket count of exported histograms.
	ExponentialHistogramMaxSize int32 `mapstructure:"exponential_histogram_max_size"`
	// IncludeCollectorInstanceID adds collector.instance.id to every data
	// point so replicas never write the same cumulative series.
	IncludeCollectorInstanceID bool `mapstructure:"include_collector_instance_id"`
	// Records configures the traces→logs output (records.go).
	Records RecordsConfig `mapstructure:"records"`
	// Histograms configures the metrics→metrics input: TTFT histograms that
	// gateways and servers export (histconfig.go).
	Histograms HistogramsConfig `mapstructure:"histograms"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// deriveOptions are the options of the connector's Deriver.
func (c *Config) deriveOptions() []derive.Option {
	if c.StampedOnly {
		return []derive.Option{derive.StampedOnly()}
	}
	return nil
}

// DeadlinesConfig holds the callers' total deadlines per route.
type DeadlinesConfig struct {
	// Default applies to routes not listed.
	Default time.Duration `mapstructure:"default"`
	// Routes maps a ttft.route value to its deadline.
	Routes map[string]time.Duration `mapstructure:"routes"`
	// Policy names the first-token policy the margin subtracts.
	Policy string `mapstructure:"policy"`
}

var _ confmap.Validator = (*Config)(nil)

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal refuses a duration key written as a bare number before
// decoding: the collector would read it as nanoseconds.
func (c *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, c) }

// reservedAttributes are set by the connector; a dimension must not reuse them.
var reservedAttributes = []string{
	record.KeyOutcome, record.KeyPromptBand, record.KeyMeasuredAt, record.KeyObserver,
	attrFailedOver, attrFirstContentSeen, attrQuantile, attrPolicy, attrCensored,
	attrCollectorInstanceID, attrOverflow, attrQuantileBound, attrResolution,
}

// maxWindowSlices bounds window_slices: each window of each series is a
// ring of that many slots, allocated at the series' first record and read
// at every flush (31,536,000 one-second slices of a year's window were
// 721 MiB and half a second per new series). 1440 is a slice a minute over
// the default 24h window.
const maxWindowSlices = 1440

// Validate checks every key eagerly; each error names the key and the fix.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if err := c.Derive.Check(); err != nil {
		errs = append(errs, err)
	}

	seen := map[string]bool{}
	for i, d := range c.Dimensions {
		switch {
		case d == "":
			add("dimensions[%d] is empty: name an attribute, e.g. gen_ai.request.model", i)
		case seen[d]:
			add("dimensions[%d] %q is listed twice: remove the duplicate", i, d)
		case contains(reservedAttributes, d):
			add("dimensions[%d] %q is set by the connector itself: remove it from dimensions", i, d)
		case record.IsRecordKey(d) || d == record.KeyNestedIn:
			// traces→logs writes dimensions as text over the record's own
			// typed keys, and the aggregating tier then refuses the record.
			add("dimensions[%d] %q is a key of the request record, not a dimension: remove it from dimensions", i, d)
		}
		seen[d] = true
	}

	if c.FlushInterval <= 0 {
		add("flush_interval must be > 0, e.g. 15s (got %v)", c.FlushInterval)
	}
	if c.Window <= 0 {
		add("window must be > 0, e.g. 24h (got %v)", c.Window)
	}
	if c.WindowSlices < 1 {
		add("window_slices must be >= 1, e.g. 24 (got %d)", c.WindowSlices)
	} else if c.WindowSlices > maxWindowSlices {
		add("window_slices must be at most %d, e.g. 24 (got %d): every window of every series holds a slot per slice and a flush reads them all", maxWindowSlices, c.WindowSlices)
	} else if c.Window > 0 && c.Window/time.Duration(c.WindowSlices) < time.Second {
		add("window / window_slices must be at least 1s (got %v / %d): use fewer slices or a longer window", c.Window, c.WindowSlices)
	}
	if c.MinSamples < 1 {
		add("min_samples must be >= 1, e.g. 200 (got %d)", c.MinSamples)
	}
	qs := map[float64]bool{}
	for i, q := range c.Quantiles {
		switch {
		case math.IsNaN(q) || q <= 0 || q >= 1:
			add("quantiles[%d] = %v must be in (0, 1), e.g. 0.99", i, q)
		case qs[q]:
			add("quantiles[%d] = %v is listed twice: remove the duplicate", i, q)
		}
		qs[q] = true
	}

	if err := c.Histograms.check(); err != nil {
		errs = append(errs, err)
	}

	if err := recommend.ValidatePolicies(c.Policies); err != nil {
		errs = append(errs, err)
	}

	if c.Deadlines.Default <= 0 {
		add("deadlines::default must be > 0, e.g. 30s (got %v)", c.Deadlines.Default)
	}
	routes := make([]string, 0, len(c.Deadlines.Routes))
	for r := range c.Deadlines.Routes {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		if d := c.Deadlines.Routes[r]; d <= 0 {
			add("deadlines::routes::%s must be > 0, e.g. 30s (got %v)", r, d)
		}
	}
	if len(c.Deadlines.Routes) > 0 && !contains(c.Dimensions, record.KeyRoute) {
		// A series' route comes from its ttft.route dimension; without it
		// every margin would use deadlines::default, silently.
		add("deadlines::routes needs %s among dimensions (a series knows its route only from that dimension): add %s to dimensions, or remove deadlines::routes and use deadlines::default", record.KeyRoute, record.KeyRoute)
	}
	if c.Deadlines.Policy != "" {
		p := c.policy(c.Deadlines.Policy)
		switch {
		case p == nil:
			add("deadlines::policy %q names no configured policy: use one of the names under policies, or leave it empty to skip ttft.deadline.margin", c.Deadlines.Policy)
		case p.Signal != recommend.SignalTimeToFirstToken:
			add("deadlines::policy %q has signal %q: the margin needs a %s policy", c.Deadlines.Policy, p.Signal, recommend.SignalTimeToFirstToken)
		}
	}

	if c.AggregationCardinalityLimit < 1 {
		add("aggregation_cardinality_limit must be >= 1, e.g. 5000 (got %d): it bounds memory", c.AggregationCardinalityLimit)
	}
	if c.MetricsExpiration < 0 {
		add("metrics_expiration must be >= 0 (0 never expires), e.g. 1h (got %v)", c.MetricsExpiration)
	}
	if c.AggregationTemporality != temporalityCumulative && c.AggregationTemporality != temporalityDelta {
		add("aggregation_temporality must be %q or %q (got %q)", temporalityCumulative, temporalityDelta, c.AggregationTemporality)
	}
	if c.ExponentialHistogramMaxSize < structure.MinSize || c.ExponentialHistogramMaxSize > structure.MaximumMaxSize {
		add("exponential_histogram_max_size must be in [%d, %d], e.g. 160 (got %d)", structure.MinSize, structure.MaximumMaxSize, c.ExponentialHistogramMaxSize)
	}
	errs = append(errs, c.Records.validate()...) // records.go
	return errors.Join(errs...)
}

func (c *Config) temporality() pmetric.AggregationTemporality {
	if c.AggregationTemporality == temporalityDelta {
		return pmetric.AggregationTemporalityDelta
	}
	return pmetric.AggregationTemporalityCumulative
}

func (c *Config) policy(name string) *recommend.Policy {
	for i := range c.Policies {
		if c.Policies[i].Name == name {
			return &c.Policies[i]
		}
	}
	return nil
}

// deadline returns the configured total deadline for a route.
func (c *Config) deadline(route string) time.Duration {
	if d, ok := c.Deadlines.Routes[route]; ok {
		return d
	}
	return c.Deadlines.Default
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
