package genaittftprocessor // import "github.com/otelcol-ttft/otelcol-ttft/processor/genaittftprocessor"

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-ttft/otelcol-ttft/internal/confcheck"
	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// Config is the genai_ttft processor configuration (docs/architecture.md §8). Keys are
// stable: add, never rename.
type Config struct {
	// Derive is the derivation block the genai_ttft connector accepts too.
	// It validates itself (the collector validates nested blocks).
	Derive derive.Config `mapstructure:"derive"`
	// DropChunkEvents removes per-chunk span events (ttft.chunk,
	// gen_ai.content.completion.chunk, llm.content.completion.chunk) after
	// deriving, to cut trace storage. The derived ttft.* attributes keep
	// what they said.
	DropChunkEvents bool `mapstructure:"drop_chunk_events"`
	// SkippedLogInterval is the least time between two log lines about
	// spans that could not be derived (each line carries the counts since
	// the previous one). 0 logs every batch that skipped something.
	SkippedLogInterval time.Duration `mapstructure:"skipped_log_interval"`

	// prevent unkeyed literal initialization
	_ struct{}
}

func createDefaultConfig() *Config {
	return &Config{
		Derive:             derive.DefaultConfig(),
		SkippedLogInterval: time.Minute,
	}
}

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal refuses a duration key written as a bare number before
// decoding: the collector would read it as nanoseconds.
func (c *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, c) }

// Validate checks every key; each error names the key and the fix.
func (c *Config) Validate() error {
	var errs []error
	if err := c.Derive.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.SkippedLogInterval < 0 {
		errs = append(errs, errors.New("skipped_log_interval must be >= 0, e.g. 1m (0 logs every batch)"))
	}
	return errors.Join(errs...)
}
