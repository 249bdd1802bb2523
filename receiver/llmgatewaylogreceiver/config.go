package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/input/file"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/confcheck"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// Formats the receiver reads (docs/architecture.md §8).
const (
	FormatInfroCSV = "infro_csv"
	FormatBifrost  = "bifrost"
	FormatLiteLLM  = "litellm"
	FormatCSV      = "csv"
	FormatJSON     = "json"
)

// Config is the llm_gateway_log receiver configuration: stanza's file input
// (include, exclude, start_at, fingerprint_size, storage, ...) plus the
// format of the rows and how they map onto the request record.
type Config struct {
	InputConfig        file.Config `mapstructure:",squash"`
	adapter.BaseConfig `mapstructure:",squash"`

	// Format is one of infro_csv, bifrost, litellm, csv, json.
	Format string `mapstructure:"format"`
	// Mapping names the columns/fields of a csv or json export. For the
	// named formats it overrides single entries of the built-in mapping.
	Mapping MappingConfig `mapstructure:"mapping"`
	// Delimiter separates CSV fields (csv formats only).
	Delimiter string `mapstructure:"delimiter"`
	// Derive is the derive block shared with the genai_ttft processor and
	// connector; the receiver uses prompt_bands, max_ttft_seconds and
	// max_duration_seconds.
	Derive derive.Config `mapstructure:"derive"`
	// KeepRow keeps the parsed row as the log body; off by default because
	// the connector needs only the attributes and rows can be large.
	KeepRow bool `mapstructure:"keep_row"`
	// Fallbacks bounds how rows of one request that failed over are held
	// until they are folded into one record (formats that link rows).
	Fallbacks FallbacksConfig `mapstructure:"fallbacks"`

	// clock drives the fallback wait; tests inject a fake one.
	clock clockwork.Clock
}

// FallbacksConfig bounds the rows held back while a request may still fail
// over: a failed first attempt waits for the fallback row that links to it
// (Bifrost's parent_request_id), and a fallback row for its parent.
type FallbacksConfig struct {
	// Wait is how long a request's rows are held after its first row was
	// read; then what arrived is emitted as it is.
	Wait time.Duration `mapstructure:"wait"`
	// MaxPending caps the requests held at once; past it the oldest is
	// emitted as it is.
	MaxPending int `mapstructure:"max_pending"`
}

// MappingConfig names where each value of the request record comes from.
// Names are CSV column names, or JSON field paths with dots for nesting
// ("token_usage.prompt_tokens"). Empty means "not in this export" (or, for
// a named format, "use the built-in name").
type MappingConfig struct {
	TTFT     string `mapstructure:"ttft"`
	TTFTUnit string `mapstructure:"ttft_unit"` // ms (default), s, us, ns
	// StartTime is the request time; it becomes the log record timestamp.
	StartTime       string `mapstructure:"start_time"`
	StartTimeFormat string `mapstructure:"start_time_format"` // rfc3339 (default), unix_s, unix_ms, unix_us, unix_ns, or a Go layout
	// FirstTokenTime is an absolute time; TTFT = first_token_time - start_time
	// when no ttft field is mapped or present.
	FirstTokenTime   string `mapstructure:"first_token_time"`
	EndTime          string `mapstructure:"end_time"`
	Duration         string `mapstructure:"duration"`
	DurationUnit     string `mapstructure:"duration_unit"` // ms (default), s, us, ns
	Model            string `mapstructure:"model"`
	Provider         string `mapstructure:"provider"`
	Route            string `mapstructure:"route"`
	PromptTokens     string `mapstructure:"prompt_tokens"`
	CachedTokens     string `mapstructure:"cached_tokens"`
	CompletionTokens string `mapstructure:"completion_tokens"`
	Attempts         string `mapstructure:"attempts"`
	Retries          string `mapstructure:"retries"`
	FallbackIndex    string `mapstructure:"fallback_index"`
	AttemptTrail     string `mapstructure:"attempt_trail"`
	Stream           string `mapstructure:"stream"`
	ErrorType        string `mapstructure:"error_type"`
	// RequestID and ParentRequestID link a fallback attempt's row to the
	// row of the request it serves; rows so linked become one record.
	RequestID       string `mapstructure:"request_id"`
	ParentRequestID string `mapstructure:"parent_request_id"`
	Status          string `mapstructure:"status"`
	// StatusValues maps the export's status values onto outcomes. Keys are
	// complete, error, closed, timeout_first_token, timeout_idle,
	// timeout_deadline, timeout (first-token or idle, decided by whether a
	// first token was seen) and skip (rows to ignore, such as in-progress).
	StatusValues map[string][]string `mapstructure:"status_values"`
	// MeasuredAt says where the export's TTFT clock stopped: first_content
	// or first_chunk (default for csv/json: first_chunk, the safe claim).
	MeasuredAt string `mapstructure:"measured_at"`
}

var validFormats = []string{FormatInfroCSV, FormatBifrost, FormatLiteLLM, FormatCSV, FormatJSON}

func (c *Config) csvFormat() bool { return c.Format == FormatInfroCSV || c.Format == FormatCSV }

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal refuses a duration key written as a bare number before
// decoding: the collector would read it as nanoseconds.
func (c *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, c) }

// Validate names the offending key and how to fix it.
func (c *Config) Validate() error {
	var errs []error
	switch c.Format {
	case FormatInfroCSV, FormatBifrost, FormatLiteLLM, FormatCSV, FormatJSON:
	case "":
		errs = append(errs, fmt.Errorf("format: required, one of %s", strings.Join(validFormats, ", ")))
	default:
		errs = append(errs, fmt.Errorf("format: unknown format %q, use one of %s", c.Format, strings.Join(validFormats, ", ")))
	}
	if len(c.InputConfig.Include) == 0 {
		errs = append(errs, errors.New("include: at least one glob is required, e.g. [/var/log/llm-gateway/*.csv]"))
	}
	for i, g := range c.InputConfig.Include {
		if _, err := filepath.Match(g, ""); err != nil || g == "" {
			errs = append(errs, fmt.Errorf("include[%d]: %q is not a valid glob: give a non-empty path pattern with balanced [ ], e.g. /var/log/llm-gateway/*.csv", i, g))
		}
	}
	for i, g := range c.InputConfig.Exclude {
		if _, err := filepath.Match(g, ""); err != nil || g == "" {
			errs = append(errs, fmt.Errorf("exclude[%d]: %q is not a valid glob: give a non-empty path pattern with balanced [ ], or remove it", i, g))
		}
	}
	switch c.InputConfig.StartAt {
	case "beginning", "end":
	default:
		errs = append(errs, fmt.Errorf("start_at: %q is invalid, use beginning or end", c.InputConfig.StartAt))
	}
	if c.csvFormat() {
		if c.InputConfig.Header != nil {
			errs = append(errs, errors.New("header: the receiver reads each CSV file's header line itself; remove the header block"))
		}
		if c.InputConfig.StartAt == "end" {
			errs = append(errs, errors.New("start_at: end cannot read CSV headers (the header line is never seen); use start_at: beginning"))
		}
		if c.InputConfig.Compression != "" {
			// stanza v0.165.1 drops the rows its header scanner buffered past a
			// compressed file's header line.
			errs = append(errs, fmt.Errorf("compression: %q cannot be combined with CSV headers (rows after the header would be lost); decompress CSV exports first, or leave compression unset", c.InputConfig.Compression))
		}
		if d, _ := utf8.DecodeRuneInString(c.Delimiter); utf8.RuneCountInString(c.Delimiter) != 1 || !utf8.ValidString(c.Delimiter) || !plainDelim(d) {
			errs = append(errs, fmt.Errorf("delimiter: %q must be a single character other than a quote, a line break or NUL, e.g. \",\"", c.Delimiter))
		}
	}
	if c.Format == FormatCSV || c.Format == FormatJSON {
		if c.Mapping.TTFT == "" && (c.Mapping.FirstTokenTime == "" || c.Mapping.StartTime == "") {
			errs = append(errs, fmt.Errorf("mapping::ttft: format %s needs the column/field that holds the TTFT (or both mapping::first_token_time and mapping::start_time)", c.Format))
		}
	}
	if err := c.Mapping.validate(); err != nil {
		errs = append(errs, err)
	}
	if _, ok := presets[c.Format]; ok {
		if _, err := newSpec(c.Format, c.Mapping); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Fallbacks.Wait <= 0 {
		errs = append(errs, fmt.Errorf("fallbacks::wait: %v must be > 0, e.g. 1m (how long a failed request's row waits for its fallback row)", c.Fallbacks.Wait))
	}
	if c.Fallbacks.MaxPending < 1 {
		errs = append(errs, fmt.Errorf("fallbacks::max_pending: %d must be >= 1, e.g. 10000", c.Fallbacks.MaxPending))
	}
	if err := c.Derive.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (m *MappingConfig) validate() error {
	var errs []error
	outcomes := make([]string, 0, len(m.StatusValues))
	for key := range m.StatusValues {
		outcomes = append(outcomes, key)
	}
	sort.Strings(outcomes)
	// Words are matched as statusWord makes them; one word under two
	// outcomes would go to whichever the map range visits last, a
	// different one from start to start.
	owner := map[string]string{}
	for _, key := range outcomes {
		if _, ok := statusKeys[key]; !ok {
			errs = append(errs, fmt.Errorf("mapping::status_values: unknown outcome %q, use complete, error, closed, timeout_first_token, timeout_idle, timeout_deadline, timeout or skip", key))
		}
		for _, w := range m.StatusValues[key] {
			word := statusWord(w)
			if o, dup := owner[word]; dup && o != key {
				errs = append(errs, fmt.Errorf("mapping::status_values::%s: %q is also listed under %s (words are matched case-insensitively): keep it under one outcome", key, w, o))
				continue
			}
			owner[word] = key
		}
	}
	return errors.Join(errs...)
}
