// Package floor holds what the two components of the end-to-end
// benchmark's floor pipeline (f) share: the least any processor + connector
// pair of genai_ttft's design (docs/architecture.md §3, §5) can cost, built
// into the benchmark's second distribution (bench/builder-spanmetrics.yaml)
// and never into otelcol-ttft.
//
// The design puts two components in the traces pipeline: a processor that
// must tell, on every span, whether it may be an LLM call, and that stamps
// a record on each call; and a connector (stamped_only) that must find, on
// every span, whether it carries a record. Through pdata's public API each
// of those is one pass over the span's attribute keys. The floor pair does
// exactly that and nothing more:
//
//   - ttft_floor processor (floorprocessor): one pass over each span's
//     keys for a gen_ai.* key; on a span that has one, the derivation's own
//     chunk loop (derive.ChunkSums) for the first chunk, first content and
//     longest pause, and record.Write of a record with those times and the
//     span's duration, every other field a constant (so the span gets the
//     keys genai_ttft writes on it, and no rule is applied);
//   - ttft_floor connector (floorconnector, traces → metrics): one
//     Map.Get of ttft.outcome on each span and, on a span that has it, one of
//     ttft.time_to_first_content, summed into two counters. It exports
//     nothing: pipeline (b)'s flush and prometheus export measured ~0.1% of
//     its CPU.
//
// (f)/(a) at a mix is then what the design costs before any derivation rule
// or aggregation: (b)/(f) is what genai_ttft's rules, windows and metrics
// add on top.
package floor // import "github.com/otelcol-ttft/otelcol-ttft/bench/floor"

import "go.opentelemetry.io/collector/component"

// Type is both components' type, ttft_floor.
var Type = component.MustNewType("ttft_floor")

// Config is both components' configuration: they have no settings.
type Config struct{}

// NewConfig is both factories' default configuration.
func NewConfig() component.Config { return &Config{} }
