package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"github.com/otelcol-ttft/otelcol-ttft/internal/logindex"
	"github.com/otelcol-ttft/otelcol-ttft/internal/quantile"
	"github.com/otelcol-ttft/otelcol-ttft/internal/recommend"
	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// signal is one of the four times of a request the connector aggregates:
// each is an exported histogram, and a recommendation window where a
// policy (or the deadline margin) reads it. This is the one list of them.
type signal int

const (
	sigTTFT signal = iota
	sigFirstChunk
	sigMaxChunkGap
	sigDuration
	numSignals
)

var signals = [numSignals]struct {
	// policy is the name a policy's signal key gives it.
	policy string
	// metric and description are those of its exported histogram.
	metric, description string
}{
	sigTTFT: {recommend.SignalTimeToFirstToken, "ttft.time_to_first_token",
		"Time to first token of streamed requests: first content where known, else first chunk (see ttft.measured_at)."},
	sigFirstChunk: {recommend.SignalTimeToFirstChunk, "ttft.time_to_first_chunk",
		"Time to the first streamed chunk of any kind, content or not."},
	sigMaxChunkGap: {recommend.SignalMaxChunkGap, "ttft.max_chunk_gap",
		"Longest pause between consecutive chunks after first content."},
	sigDuration: {recommend.SignalDuration, "ttft.duration",
		"Total duration of streamed requests."},
}

// signalNamed returns the signal a policy names.
func signalNamed(name string) (signal, bool) {
	for i := range signals {
		if signals[i].policy == name {
			return signal(i), true
		}
	}
	return 0, false
}

// signalValues are a record's signals, read and indexed once for the
// histograms and the windows: k, kok = logindex.Ceil(v), the bucket
// both take their index from.
type signalValues struct {
	v   [numSignals]float64
	ok  [numSignals]bool
	k   [numSignals]int
	kok [numSignals]bool
}

// read takes the signals from a record: where each signal comes from.
func (sv *signalValues) read(rec *record.Record) {
	sv.v[sigTTFT], sv.ok[sigTTFT] = rec.TTFT()
	sv.v[sigFirstChunk], sv.ok[sigFirstChunk] = rec.TimeToFirstChunk, rec.HasTimeToFirstChunk
	sv.v[sigMaxChunkGap], sv.ok[sigMaxChunkGap] = rec.MaxChunkGap, rec.HasMaxChunkGap
	sv.v[sigDuration], sv.ok[sigDuration] = rec.Duration, rec.HasDuration
	for i, ok := range sv.ok {
		if ok {
			if sv.v[i] > 0 && sv.v[i] < quantile.MinValue {
				// Under a nanosecond is no time a request takes: zero, as
				// the windows count it. As itself it would drag the
				// exported histogram's scale down for the whole series
				// (1e-300 s: from 6 to -3, buckets 256 times apart).
				sv.v[i] = 0
			}
			sv.k[i], sv.kok[i] = logindex.Ceil(sv.v[i])
		}
	}
}
