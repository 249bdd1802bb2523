package derive

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// fixturesDir holds real spans from real instrumentation libraries with
// their answer keys (testdata/fixtures/README.md).
const fixturesDir = "../../testdata/fixtures"

// expectation is one scenario of a library's expected.json.
type expectation struct {
	Requests     int      `json:"requests"`
	Streamed     bool     `json:"streamed"`
	TTFT         *float64 `json:"ttft_s"`
	Tolerance    float64  `json:"ttft_tolerance_s"`
	MeasuredAt   *string  `json:"measured_at"`
	OutcomeAnyOf []string `json:"outcome_any_of"`
	PromptBand   *string  `json:"prompt_band"`
	// Gateway captures (bifrost-gateway) add these.
	AttemptsMin *int64 `json:"attempts_min"`
	FailedOver  *bool  `json:"failed_over"`
}

// observers is where each library's clock runs; client apps unless listed.
var observers = map[string]string{"bifrost-gateway": record.ObserverGateway}

func readTraces(t testing.TB, path string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return td
}

func libraries(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(fixturesDir)
	require.NoError(t, err)
	var libs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(fixturesDir, e.Name(), "expected.json")); err == nil {
			libs = append(libs, e.Name())
		}
	}
	require.NotEmpty(t, libs)
	return libs
}

func TestFixturesMatchAnswerKeys(t *testing.T) {
	d, err := New(DefaultConfig())
	require.NoError(t, err)
	for _, lib := range libraries(t) {
		raw, err := os.ReadFile(filepath.Join(fixturesDir, lib, "expected.json"))
		require.NoError(t, err)
		var scenarios map[string]expectation
		require.NoError(t, json.Unmarshal(raw, &scenarios))
		names := make([]string, 0, len(scenarios))
		for n := range scenarios {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, scenario := range names {
			want := scenarios[scenario]
			t.Run(lib+"/"+scenario, func(t *testing.T) {
				path := filepath.Join(fixturesDir, lib, scenario+".traces.json")
				td := ptrace.NewTraces()
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					require.Zero(t, want.Requests, "answer key expects records but the library exported no spans")
				} else {
					td = readTraces(t, path)
				}
				var recs []record.Record
				st := d.Traces(td, func(_ pcommon.Resource, _ ptrace.Span, rec *record.Record) {
					recs = append(recs, *rec)
				})
				require.Len(t, recs, want.Requests, "one record per call (stats %+v)", st)
				for _, rec := range recs {
					ttft, has := rec.TTFT()
					if want.TTFT == nil {
						assert.False(t, has, "no TTFT evidence on these spans, got %v (%s)", ttft, rec.Source)
						assert.Empty(t, rec.MeasuredAt)
					} else {
						require.True(t, has, "TTFT expected")
						assert.InDelta(t, *want.TTFT, ttft, want.Tolerance, "source %s", rec.Source)
						require.NotNil(t, want.MeasuredAt)
						assert.Equal(t, *want.MeasuredAt, rec.MeasuredAt)
					}
					if !want.Streamed {
						assert.False(t, has, "non-streamed calls never get a TTFT")
						if rec.StreamedKnown {
							assert.False(t, rec.Streamed)
						}
					}
					assert.Contains(t, want.OutcomeAnyOf, rec.Outcome)
					if want.PromptBand != nil {
						assert.Equal(t, *want.PromptBand, rec.PromptBand)
					}
					wantObserver := record.ObserverClient
					if o, ok := observers[lib]; ok {
						wantObserver = o
					}
					assert.Equal(t, wantObserver, rec.Observer)
					assert.GreaterOrEqual(t, rec.Attempts, int64(1))
					if want.AttemptsMin != nil {
						assert.GreaterOrEqual(t, rec.Attempts, *want.AttemptsMin, "attempts, retries and failovers included")
					}
					if want.FailedOver != nil {
						assert.Equal(t, *want.FailedOver, rec.DidFailOver(), "failed over")
						if *want.FailedOver {
							assert.GreaterOrEqual(t, rec.Attempts, int64(2))
						}
					}
					assert.True(t, rec.HasDuration)
					if has {
						assert.False(t, math.Abs(ttft-rec.Duration) <= 1e-3, "TTFT is never the span duration")
					}
				}
				assert.Equal(t, int64(want.Requests), st.Records)
				assert.True(t, slices.Contains([]int64{0}, st.Skipped[ReasonInvalidRecord]))
			})
		}
	}
}

// The records' ttft.source for chunk events is the name recommend reads to
// tell content-aware chunk evidence (record.SourceChunkEvent).
func TestChunkEventSourceIsRecords(t *testing.T) {
	if EventChunk != record.SourceChunkEvent {
		t.Fatalf("EventChunk %q, record.SourceChunkEvent %q", EventChunk, record.SourceChunkEvent)
	}
}
