package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Config is the `derive:` block shared by the genai_ttft processor and
// connector (docs/architecture.md §8).
type Config struct {
	// PromptBands are the band boundaries in input tokens.
	PromptBands []int64 `mapstructure:"prompt_bands"`
	// RouteAttribute names the span/record attribute that holds the route
	// (gateway config name); its value lands in ttft.route.
	RouteAttribute string `mapstructure:"route_attribute"`
	// MaxEvents caps how many span events are read per span; the rest are
	// ignored (and counted), so a runaway event list cannot stall a batch.
	MaxEvents int `mapstructure:"max_events"`
	// MaxTTFT rejects TTFT values above it as absurd (counted, not recorded).
	MaxTTFTSeconds float64 `mapstructure:"max_ttft_seconds"`
	// MaxDurationSeconds rejects longer requests as absurd: their times
	// are not used, and a read-back record above it is derived afresh.
	MaxDurationSeconds float64 `mapstructure:"max_duration_seconds"`
	// MaxChunkGapSeconds rejects longer pauses between chunks as absurd.
	MaxChunkGapSeconds float64 `mapstructure:"max_chunk_gap_seconds"`
	// ContentExactProducers extends the built-in table of instrumentation
	// scopes whose time_to_first_chunk attribute is known to stop at the
	// first content delta (docs/architecture.md §4).
	ContentExactProducers []Producer `mapstructure:"content_exact_producers"`
	// Producers adds producers (or replaces a built-in one of the same
	// name) for Rows to refer to.
	Producers []ProducerMatch `mapstructure:"producers"`
	// Rows adds rows to the producer table; a row for the same producer and
	// key as a built-in one replaces it.
	Rows []Row `mapstructure:"rows"`
	// SkipScopes lists instrumentation scope name prefixes whose spans and
	// log records are never read: they pass untouched and are counted as
	// skipped (reason scope_skipped). It is for scopes that hold no LLM call
	// (HTTP, database, RPC instrumentation): their spans then cost one
	// comparison a scope, not a pass over each span's attributes
	// (docs/architecture.md, "Scopes that hold no calls").
	SkipScopes []string `mapstructure:"skip_scopes"`
}

// Producer identifies an instrumentation scope by name prefix.
type Producer struct {
	// ScopePrefix matches the instrumentation scope name by prefix.
	ScopePrefix string `mapstructure:"scope_prefix"`
	// Attribute is the attribute that this producer measures to first content.
	Attribute string `mapstructure:"attribute"`
	// Unit of the attribute's value: s (default), ms, us, ns or ns_or_ms.
	Unit string `mapstructure:"unit"`
}

// DefaultConfig returns the defaults of docs/architecture.md §8.
func DefaultConfig() Config {
	return Config{
		PromptBands:    append([]int64(nil), band.DefaultBoundaries...),
		RouteAttribute: "ttft.route",
		MaxEvents:      10000,
		MaxTTFTSeconds: 3600,

		MaxDurationSeconds: 86400,
		MaxChunkGapSeconds: 3600,
	}
}

// Check names the offending key and how to fix it. It is not called
// Validate on purpose: the collector validates nested blocks by that name
// too, and every component checks its derive block itself, so an error
// would be reported twice.
func (c *Config) Check() error {
	var errs []error
	if err := band.Validate(c.PromptBands); err != nil {
		errs = append(errs, fmt.Errorf("derive::%w", err))
	}
	if c.MaxEvents < 0 {
		errs = append(errs, errors.New("derive::max_events must be >= 0 (0 reads no events)"))
	}
	// !(x > 0) refuses NaN too: every comparison with NaN is false, so a
	// NaN bound would refuse nothing.
	if !(c.MaxTTFTSeconds > 0) {
		errs = append(errs, errors.New("derive::max_ttft_seconds must be > 0, e.g. 3600"))
	}
	if !(c.MaxDurationSeconds > 0) || math.IsInf(c.MaxDurationSeconds, 0) {
		errs = append(errs, errors.New("derive::max_duration_seconds must be a finite number > 0, e.g. 86400"))
	} else if c.MaxTTFTSeconds > c.MaxDurationSeconds {
		errs = append(errs, errors.New("derive::max_ttft_seconds must not exceed derive::max_duration_seconds (a first token comes before the end): raise derive::max_duration_seconds or lower derive::max_ttft_seconds"))
	}
	if !(c.MaxChunkGapSeconds > 0) || math.IsInf(c.MaxChunkGapSeconds, 0) {
		errs = append(errs, errors.New("derive::max_chunk_gap_seconds must be a finite number > 0, e.g. 3600"))
	}
	for i, p := range c.ContentExactProducers {
		if p.ScopePrefix == "" || p.Attribute == "" {
			errs = append(errs, fmt.Errorf("derive::content_exact_producers[%d]: both scope_prefix and attribute are required", i))
		}
		if _, ok := parseUnit(p.Unit); !ok {
			errs = append(errs, fmt.Errorf("derive::content_exact_producers[%d]::unit %q: use s, ms, us or ns (or ns_or_ms)", i, p.Unit))
		}
	}
	for i, p := range c.Producers {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("derive::producers[%d]::name is required", i))
		}
		if len(p.ScopePrefixes)+len(p.ScopeNames)+len(p.ServiceNames)+len(p.ScopeContains) == 0 {
			errs = append(errs, fmt.Errorf("derive::producers[%d] (%s): give scope_prefixes, scope_names, scope_contains or service_names, or it matches nothing", i, p.Name))
		}
		// An empty prefix or substring (an unset ${env:...} expands to one)
		// matches every scope or service: every call would be this
		// producer's, read with its rows and its gateway clock.
		for _, l := range []struct {
			key, what string
			vals      []string
		}{
			{"scope_prefixes", "a scope name prefix", p.ScopePrefixes},
			{"scope_contains", "a part of the scope name", p.ScopeContains},
			{"service_names", "a part of the service name", p.ServiceNames},
		} {
			for j, v := range l.vals {
				if v == "" {
					errs = append(errs, fmt.Errorf("derive::producers[%d]::%s[%d] is empty: it would match every span and make every call producer %s's; give %s, or remove it", i, l.key, j, p.Name, l.what))
				}
			}
		}
	}
	errs = append(errs, c.checkSkipScopes()...)
	if len(errs) == 0 {
		if _, err := c.table(); err != nil {
			errs = append(errs, err)
		} else if err := c.checkRouteAttribute(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkRouteAttribute refuses a route_attribute that the producer table or
// the request record reads as something else: the attribute is taken as
// the route and nothing else, so route_attribute: gen_ai.request.model made
// every record's model empty.
func (c *Config) checkRouteAttribute() error {
	r := c.RouteAttribute
	if r == "" {
		return nil
	}
	if r != record.KeyRoute && (record.IsRecordKey(r) || r == record.KeyNestedIn) {
		return fmt.Errorf("derive::route_attribute %q is a key of the request record: name the attribute that holds the route, e.g. %s", r, record.KeyRoute)
	}
	rows, _ := c.rows()
	for _, row := range rows {
		if !row.Event && row.Key == r {
			return fmt.Errorf("derive::route_attribute %q is read as %s by the producer table, which it would stop: name the attribute that holds the route, e.g. %s, or leave it empty", r, row.Meaning, record.KeyRoute)
		}
	}
	return nil
}

// maxSkipScopes bounds derive::skip_scopes: each scope of a batch is
// compared with every prefix.
const maxSkipScopes = 256

// checkSkipScopes refuses a skip_scopes prefix that is empty (it would skip
// every span) or that would skip the scopes of a producer, built-in or
// configured (under producers, by name or prefix, or content_exact_producers):
// those scopes hold LLM calls.
func (c *Config) checkSkipScopes() []error {
	var errs []error
	if n := len(c.SkipScopes); n > maxSkipScopes {
		errs = append(errs, fmt.Errorf("derive::skip_scopes: at most %d prefixes, got %d", maxSkipScopes, n))
	}
	prods := c.producers()
	for i, p := range c.SkipScopes {
		if p == "" {
			errs = append(errs, fmt.Errorf("derive::skip_scopes[%d] is empty: it would skip every span; remove it", i))
			continue
		}
		for _, m := range prods {
			for _, scopes := range [][]string{m.ScopePrefixes, m.ScopeNames} {
				for _, scope := range scopes {
					if strings.HasPrefix(scope, p) {
						errs = append(errs, fmt.Errorf("derive::skip_scopes[%d] %q would skip scope %q of producer %s, which holds LLM calls: use a longer prefix, or remove it", i, p, scope, m.Name))
					}
				}
			}
		}
	}
	return errs
}

// producers are the producer table's producers: the built-in ones, the
// configured ones, then one for each content_exact_producers entry.
func (c *Config) producers() []ProducerMatch {
	prods := append(DefaultProducers(), c.Producers...)
	for i, p := range c.ContentExactProducers {
		prods = append(prods, ProducerMatch{Name: contentExactName(i), ScopePrefixes: []string{p.ScopePrefix}})
	}
	return prods
}

// contentExactName names the producer of content_exact_producers[i].
func contentExactName(i int) string { return fmt.Sprintf("content_exact_producers[%d]", i) }

// rows is every row of the producer table in the order it is built: the
// built-in rows, then content_exact_producers, then derive::rows, which
// start at configured.
func (c *Config) rows() (rows []Row, configured int) {
	rows = DefaultRows()
	for i, p := range c.ContentExactProducers {
		rows = append(rows, Row{Producer: contentExactName(i), Key: p.Attribute, Meaning: MeaningFirstContent.String(), Unit: p.Unit, Rank: prioProducerExact, Source: "derive::content_exact_producers"})
	}
	configured = len(rows)
	return append(rows, c.Rows...), configured
}

// table builds the producer table: the built-in producers and rows, then
// content_exact_producers, then the configured producers and rows.
func (c *Config) table() (*rowTable, error) {
	rows, configured := c.rows()
	t, err := newRowTable(c.producers(), rows, configured)
	if err != nil {
		return nil, err
	}
	if n := len(rows); n > 1<<14 {
		return nil, fmt.Errorf("derive::rows: at most %d rows, got %d", 1<<14, n)
	}
	if n := len(t.named); n > maxScopeRows {
		return nil, fmt.Errorf("derive::rows: at most %d rows for named producers, got %d", maxScopeRows, n)
	}
	return t, nil
}
