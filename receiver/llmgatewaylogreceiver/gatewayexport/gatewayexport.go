// Package gatewayexport writes deterministic, realistic gateway request
// exports in the infro_csv format the llm_gateway_log receiver reads: several
// routes and models, every prompt band plus unknown sizes, lognormal TTFT with
// slow tails, errors, first-token/idle/deadline timeouts, closed streams and
// failovers. The same seed always yields the same bytes, so tests, benchmarks
// and demo data can share it (cmd/gen-gateway-export is its command line).
package gatewayexport // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Columns is the header the generator writes, in order.
var Columns = []string{
	"request_id", "created_at", "route_slug", "provider", "model", "status",
	"ttft_ms", "latency_ms", "prompt_tokens", "cached_tokens", "completion_tokens", "attempts",
}

// TimeLayout is how created_at is written (UTC, millisecond precision).
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Options control one export.
type Options struct {
	Rows  int
	Seed  uint64
	Start time.Time
	// Span is the time the rows are spread over (created_at ascending).
	Span time.Duration
	// Header writes the column line first; appenders to an existing file turn it off.
	Header bool
	// FirstID numbers request ids from this value, so appended rows stay unique.
	FirstID int
}

// Row is one generated request. TTFTMs < 0 means the export leaves ttft_ms
// empty (no content ever arrived); PromptTokens < 0 means unknown.
type Row struct {
	ID               int
	CreatedAt        time.Time
	Route            string
	Provider         string
	Model            string
	Status           string
	TTFTMs           float64
	LatencyMs        float64
	PromptTokens     int64
	CachedTokens     int64
	CompletionTokens int64
	Attempts         int
}

type model struct {
	provider, name string
	medianMs       float64 // TTFT median for a small prompt
	sigma          float64
	tokensPerSec   float64
}

type route struct {
	slug         string
	models       []model
	weight       float64
	promptMedian float64 // tokens
	promptSigma  float64
	cutMs        float64 // the gateway's first-token timeout on this route
	deadlineMs   float64
}

var (
	gpt41mini  = model{"openai", "gpt-4.1-mini", 380, 0.45, 90}
	gpt41      = model{"openai", "gpt-4.1", 620, 0.5, 60}
	sonnet     = model{"anthropic", "claude-sonnet-4-5", 950, 0.5, 55}
	haiku      = model{"anthropic", "claude-haiku-4-5", 420, 0.4, 110}
	gemFlash   = model{"gcp.gemini", "gemini-2.5-flash", 470, 0.55, 140}
	o4mini     = model{"openai", "o4-mini", 2600, 0.65, 80}
	llama70b   = model{"groq", "llama-3.3-70b-versatile", 240, 0.6, 250}
	defaultMix = []route{
		{"chat-default", []model{gpt41mini, haiku, gemFlash}, 0.34, 900, 1.0, 10000, 30000},
		{"code-assist", []model{sonnet, gpt41}, 0.22, 7000, 0.9, 20000, 60000},
		{"rag-summarize", []model{gemFlash, sonnet}, 0.16, 26000, 0.7, 30000, 90000},
		{"agent-tools", []model{sonnet, o4mini}, 0.14, 52000, 0.6, 45000, 120000},
		{"fast-classify", []model{llama70b, gpt41mini}, 0.14, 600, 0.8, 5000, 10000},
	}
)

// Generate calls emit for each row in order.
func Generate(opts Options, emit func(*Row)) {
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	span := opts.Span
	if span <= 0 {
		span = 24 * time.Hour
	}
	step := float64(span) / math.Max(1, float64(opts.Rows))
	var total float64
	for _, r := range defaultMix {
		total += r.weight
	}
	var row Row
	for i := 0; i < opts.Rows; i++ {
		// Jitter within each slot keeps created_at ascending.
		at := opts.Start.Add(time.Duration((float64(i) + rng.Float64()*0.9) * step))
		pick := rng.Float64() * total
		rt := defaultMix[len(defaultMix)-1]
		for _, r := range defaultMix {
			if pick < r.weight {
				rt = r
				break
			}
			pick -= r.weight
		}
		m := rt.models[rng.IntN(len(rt.models))]
		row = Row{
			ID: opts.FirstID + i, CreatedAt: at.UTC(), Route: rt.slug,
			Provider: m.provider, Model: m.name, Attempts: 1,
			PromptTokens: -1, CachedTokens: -1, CompletionTokens: -1,
		}
		fill(rng, rt, m, &row)
		emit(&row)
	}
}

// fill draws one request's size, timeline and outcome.
func fill(rng *rand.Rand, rt route, m model, row *Row) {
	prompt := int64(math.Round(rt.promptMedian * math.Exp(rt.promptSigma*rng.NormFloat64())))
	prompt = max(prompt, 12)
	known := rng.Float64() >= 0.03 // some gateways log no usage for a few requests
	if known {
		row.PromptTokens = prompt
		if rng.Float64() < 0.35 {
			row.CachedTokens = int64(float64(prompt) * (0.3 + 0.6*rng.Float64()))
		} else {
			row.CachedTokens = 0
		}
	}
	// Prefill grows with the prompt; cached tokens are cheaper to prefill.
	effective := float64(prompt)
	if row.CachedTokens > 0 {
		effective -= 0.8 * float64(row.CachedTokens)
	}
	ttft := m.medianMs * (1 + effective/24000) * math.Exp(m.sigma*rng.NormFloat64())
	if rng.Float64() < 0.025 { // queueing / cold replica tail
		ttft *= math.Exp(math.Log(4) + 0.6*rng.NormFloat64())
	}
	// A failover before streaming costs the failed attempt's time.
	switch u := rng.Float64(); {
	case u < 0.006:
		row.Attempts = 3
		ttft += 2 * (300 + 1500*rng.Float64())
	case u < 0.045:
		row.Attempts = 2
		ttft += 300 + 1500*rng.Float64()
	}
	completion := int64(math.Round(250 * math.Exp(0.9*rng.NormFloat64())))
	completion = max(completion, 1)
	streamMs := float64(completion) / m.tokensPerSec * 1000 * (0.8 + 0.4*rng.Float64())
	ttft = math.Round(ttft*10) / 10

	row.Status = "ok"
	row.TTFTMs = ttft
	row.LatencyMs = math.Round(ttft + streamMs)
	row.CompletionTokens = completion
	switch u := rng.Float64(); {
	case ttft >= rt.cutMs:
		// The gateway gave up waiting: no first token, duration = the cut.
		row.Status, row.TTFTMs, row.LatencyMs, row.CompletionTokens = "timeout_first_token", -1, rt.cutMs, 0
	case u < 0.012: // upstream error before any content
		row.Status, row.TTFTMs, row.CompletionTokens = "error", -1, 0
		row.LatencyMs = math.Round(40 + 2000*rng.Float64())
	case u < 0.017: // error event mid-stream
		row.Status = "error"
		row.CompletionTokens = completion / 3
		row.LatencyMs = math.Round(ttft + streamMs/3)
	case u < 0.021:
		row.Status = "timeout_idle"
		row.CompletionTokens = completion / 2
		row.LatencyMs = math.Round(ttft + streamMs/2 + 15000)
	case u < 0.023:
		row.Status = "timeout_deadline"
		row.LatencyMs = rt.deadlineMs
		row.TTFTMs = math.Min(ttft, rt.deadlineMs-1)
	case u < 0.027:
		row.Status = "closed" // the client went away
		row.CompletionTokens = completion / 4
		row.LatencyMs = math.Round(ttft + streamMs/4)
	}
	if !known {
		row.CompletionTokens = -1
	}
}

// Write writes an export to w and returns the number of rows written.
func Write(w io.Writer, opts Options) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	if opts.Header {
		for i, c := range Columns {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			_, _ = bw.WriteString(c)
		}
		_ = bw.WriteByte('\n')
	}
	n := 0
	buf := make([]byte, 0, 256)
	Generate(opts, func(r *Row) {
		buf = AppendRow(buf[:0], r)
		_, _ = bw.Write(buf)
		n++
	})
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("write export: %w", err)
	}
	return n, nil
}

// AppendRow appends r as one CSV line in Columns order.
func AppendRow(b []byte, r *Row) []byte {
	b = append(b, "req-"...)
	b = strconv.AppendInt(b, int64(r.ID), 10)
	b = append(b, ',')
	b = r.CreatedAt.AppendFormat(b, TimeLayout)
	b = append(b, ',')
	b = append(b, r.Route...)
	b = append(b, ',')
	b = append(b, r.Provider...)
	b = append(b, ',')
	b = append(b, r.Model...)
	b = append(b, ',')
	b = append(b, r.Status...)
	b = append(b, ',')
	if r.TTFTMs >= 0 {
		b = strconv.AppendFloat(b, r.TTFTMs, 'f', -1, 64)
	}
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.LatencyMs, 'f', -1, 64)
	b = append(b, ',')
	b = appendOptInt(b, r.PromptTokens)
	b = append(b, ',')
	b = appendOptInt(b, r.CachedTokens)
	b = append(b, ',')
	b = appendOptInt(b, r.CompletionTokens)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Attempts), 10)
	return append(b, '\n')
}

func appendOptInt(b []byte, v int64) []byte {
	if v < 0 {
		return b
	}
	return strconv.AppendInt(b, v, 10)
}
