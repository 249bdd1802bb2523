package e2eload

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestBodiesHoldTheMix(t *testing.T) {
	for _, tc := range []struct {
		mix          Mix
		spans, genai int
	}{
		{Mixes[0], 500, 0},
		{Mixes[1], 500, 25},
		{Mixes[2], 500, 500},
	} {
		t.Run(tc.mix.Name, func(t *testing.T) {
			bodies, err := Bodies(tc.mix, 500, 3, time.Now())
			require.NoError(t, err)
			require.Len(t, bodies, 3)
			assert.NotEqual(t, bodies[0].Data, bodies[1].Data, "variants differ")
			for _, b := range bodies {
				assert.Equal(t, tc.spans, b.Spans)
				assert.Equal(t, tc.genai, b.GenAI)
				var u ptrace.ProtoUnmarshaler
				td, err := u.UnmarshalTraces(b.Data)
				require.NoError(t, err)
				assert.Equal(t, tc.spans, td.SpanCount())
				assertParentsInBatch(t, td, tc.mix.GenAIShare < 1)
			}
		})
	}
}

// In a mixed body every span's parent is in the batch; in an all-GenAI body
// every GenAI span's parent is outside it.
func assertParentsInBatch(t *testing.T, td ptrace.Traces, inBatch bool) {
	t.Helper()
	ids := map[[8]byte]bool{}
	var all []ptrace.Span
	sss := td.ResourceSpans().At(0).ScopeSpans()
	for i := 0; i < sss.Len(); i++ {
		for j := 0; j < sss.At(i).Spans().Len(); j++ {
			s := sss.At(i).Spans().At(j)
			ids[s.SpanID()] = true
			all = append(all, s)
		}
	}
	for _, s := range all {
		if s.ParentSpanID().IsEmpty() {
			continue
		}
		require.Equal(t, inBatch, ids[s.ParentSpanID()], "span %q", s.Name())
		attrs := s.Attributes().Len()
		if _, genai := s.Attributes().Get("gen_ai.operation.name"); !genai {
			assert.Equal(t, 12, attrs, "plain span %q", s.Name())
			assert.Equal(t, 1, s.Events().Len())
		} else {
			assert.Equal(t, chunkEvents, s.Events().Len())
		}
	}
}

func TestParseMetrics(t *testing.T) {
	m, err := parseMetrics(strings.NewReader(`# HELP otelcol_receiver_accepted_spans x
# TYPE otelcol_receiver_accepted_spans counter
otelcol_receiver_accepted_spans{receiver="otlp",transport="http"} 1500
otelcol_receiver_accepted_spans{receiver="otlp",transport="grpc"} 500
traces_span_metrics_calls_total{span_name="GET /a b}",status_code="STATUS_CODE_UNSET"} 7 1764590000000
otelcol_process_uptime 1.5e+01
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{
		"otelcol_receiver_accepted_spans": 2000,
		"traces_span_metrics_calls":       7,
		"otelcol_process_uptime":          15,
	}, m)
	_, err = parseMetrics(strings.NewReader("name{a=\"b\"} notanumber\n"))
	assert.Error(t, err)
}

func TestAccountedRefusesShortCounts(t *testing.T) {
	b, err := PipelineByName("b")
	require.NoError(t, err)
	sent := counts{spans: 1000, genai: 50}
	full := map[string]float64{
		"otelcol_receiver_accepted_spans":            1000,
		"otelcol_exporter_sent_spans":                1000,
		"otelcol_processor_genai_ttft_spans_derived": 50,
		"otelcol_connector_genai_ttft_records":       50,
	}
	require.NoError(t, accounted(full, b, sent))
	for key := range full {
		short := map[string]float64{}
		for k, v := range full {
			short[k] = v
		}
		short[key]--
		assert.ErrorContains(t, accounted(short, b, sent), key)
	}
	full["otelcol_receiver_refused_spans"] = 1
	assert.ErrorContains(t, accounted(full, b, sent), "refused")
}

func TestReadProcOfSelf(t *testing.T) {
	st0, err := readProc(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, st0.peakKB)
	assert.GreaterOrEqual(t, st0.ticks, int64(0))
	if st0.runNS < 0 {
		t.Skip("this kernel gives no schedstat: the harness counts ticks")
	}
	// A third of a second of CPU (however long a loaded machine takes to
	// give it): the ticks and the nanoseconds agree to a tick at each end,
	// and cpuSeconds takes the nanoseconds.
	x := 0
	var st1 procStat
	for start := time.Now(); ; {
		for spin := time.Now(); time.Since(spin) < 20*time.Millisecond; {
			x++
		}
		st1, err = readProc(os.Getpid())
		require.NoError(t, err)
		if st1.runNS-st0.runNS >= 330e6 {
			break
		}
		require.Less(t, time.Since(start), 30*time.Second, "no CPU for the spin")
	}
	hz := ticksPerSecond()
	byTicks := float64(st1.ticks-st0.ticks) / hz
	byNS := float64(st1.runNS-st0.runNS) / 1e9
	assert.InDelta(t, byTicks, byNS, 2/hz+0.01, "x=%d", x)
	assert.Equal(t, byNS, cpuSeconds(st0, st1, hz))
}

func TestCPUSecondsFallsBackToTicks(t *testing.T) {
	const hz = 100
	st0 := procStat{ticks: 1000, runNS: 10e9}
	// Nanoseconds within two ticks of the ticks: they are used.
	assert.InDelta(t, 1.015, cpuSeconds(st0, procStat{ticks: 1100, runNS: 11.015e9}, hz), 1e-12)
	assert.InDelta(t, 0.985, cpuSeconds(st0, procStat{ticks: 1100, runNS: 10.985e9}, hz), 1e-12)
	// A thread that exited took its nanoseconds along: the ticks count.
	assert.InDelta(t, 1.0, cpuSeconds(st0, procStat{ticks: 1100, runNS: 10.9e9}, hz), 1e-12)
	// No schedstat: the ticks.
	assert.InDelta(t, 1.0, cpuSeconds(procStat{ticks: 1000, runNS: -1}, procStat{ticks: 1100, runNS: -1}, hz), 1e-12)
}

func TestReportRatiosAndGoals(t *testing.T) {
	var runs []Sample
	for rep, cpu := range [][3]float64{{10, 10.4, 11}, {12, 12.3, 13}, {11, 11.2, 12}} {
		for i, p := range []string{"a", "b", "c"} {
			runs = append(runs,
				Sample{Rep: rep, Result: Result{Pipeline: p, Mix: "95/5", Spans: 1_000_000, CPUSeconds: cpu[i]}},
				Sample{Rep: rep, Result: Result{Pipeline: p, Mix: "genai", Spans: 1_000_000, CPUSeconds: 2 * cpu[2-i]}})
		}
	}
	var out bytes.Buffer
	Report(&out, runs, Pipelines, Mixes)
	s := out.String()
	assert.Contains(t, s, "95/5   b/a    1.025")
	assert.Contains(t, s, "≤ 1.05: met")
	assert.Contains(t, s, "genai  b/c    1.025")
	assert.Contains(t, s, "≤ 1.00: NOT met")
}

func TestBaselinePipeline(t *testing.T) {
	// b0 is (b)'s configuration on the -baseline binary; b/b0 is reported.
	b0, err := PipelineByName("b0")
	require.NoError(t, err)
	assert.Equal(t, configFor(Pipelines[1], 1, 2, 3), configFor(b0, 1, 2, 3))
	opts := Options{Collector: "new", Spanmetrics: "sm", Baseline: "old"}
	assert.Equal(t, "old", opts.Binary(b0))
	assert.Equal(t, "new", opts.Binary(Pipelines[1]))
	assert.Equal(t, "sm", opts.Binary(Pipelines[2]))

	var runs []Sample
	for rep, cpu := range [][3]float64{{10, 10.4, 10.8}, {12, 12.3, 12.9}, {11, 11.2, 11.5}} {
		for i, p := range []string{"a", "b", "b0"} {
			runs = append(runs, Sample{Rep: rep, Result: Result{Pipeline: p, Mix: "95/5", Spans: 1_000_000, CPUSeconds: cpu[i]}})
		}
	}
	var out bytes.Buffer
	Report(&out, runs, []Pipeline{Pipelines[0], Pipelines[1], b0}, Mixes[1:2])
	s := out.String()
	assert.Contains(t, s, "95/5  b/a    1.025")
	assert.Contains(t, s, "95/5  b0/a   1.075")
	assert.Contains(t, s, "95/5  b/b0   0.963")

	// (bs) is reported against (a) and against (b).
	for i, cpu := range []float64{10.2, 12.1, 11.1} {
		runs = append(runs, Sample{Rep: i, Result: Result{Pipeline: "bs", Mix: "95/5", Spans: 1_000_000, CPUSeconds: cpu}})
	}
	bs, err := PipelineByName("bs")
	require.NoError(t, err)
	out.Reset()
	Report(&out, runs, []Pipeline{Pipelines[0], Pipelines[1], bs}, Mixes[1:2])
	s = out.String()
	assert.Contains(t, s, "95/5  bs/a   1.009")
	assert.Contains(t, s, "95/5  bs/b   0.984")
}

// TestSmoke runs the harness itself, tiny, against the built distribution so
// it cannot rot: pipeline (a) alone, then (a), (b) and (bs), whose
// configurations use our components' keys, side by side. make test sets TTFT_E2E=1 and OTELCOL_TTFT_BIN.
func TestSmoke(t *testing.T) {
	if os.Getenv("TTFT_E2E") != "1" {
		t.Skip("end-to-end smoke run: set TTFT_E2E=1 (make test does)")
	}
	bin := os.Getenv("OTELCOL_TTFT_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "dist", "otelcol-ttft")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("distribution binary %s not found (run make build): %v", bin, err)
	}
	opts := Options{Collector: bin, Rate: 5000, Spans: 3000, Warmup: 500, SpansPerRequest: 100, Workers: 2, Dir: t.TempDir()}
	a, err := PipelineByName("a")
	require.NoError(t, err)
	r, err := Run(context.Background(), a, Mixes[1], opts)
	require.NoError(t, err, "pipeline a alone")
	assert.Equal(t, 3000, r.Spans)
	assert.Positive(t, r.CPUSeconds)

	smokeTogether(t, opts, "a", "b", "bs")
}

// smokeTogether runs the named pipelines side by side on the 95/5 mix and
// checks that each accounted for all 3,000 spans, 150 of them GenAI.
func smokeTogether(t *testing.T, opts Options, names ...string) {
	t.Helper()
	var ps []Pipeline
	for _, n := range names {
		p, err := PipelineByName(n)
		require.NoError(t, err)
		ps = append(ps, p)
	}
	rs, err := RunTogether(context.Background(), ps, Mixes[1], opts)
	require.NoError(t, err, "pipelines %v side by side", names)
	require.Len(t, rs, len(names))
	for i, name := range names {
		assert.Equal(t, name, rs[i].Pipeline)
		assert.Equal(t, 3000, rs[i].Spans)
		assert.Equal(t, 150, rs[i].GenAI)
		assert.Positive(t, rs[i].CPUSeconds)
	}
}

// TestSmokeVariant runs the pipelines of the benchmark's second
// distribution side by side: the control (a2), (b2), spanmetrics (c) and
// the floor (f), whose ttft_floor components exist only there. make test
// builds it and sets OTELCOL_TTFT_SPANMETRICS_BIN.
func TestSmokeVariant(t *testing.T) {
	bin := os.Getenv("OTELCOL_TTFT_SPANMETRICS_BIN")
	if os.Getenv("TTFT_E2E") != "1" || bin == "" {
		t.Skip("end-to-end smoke run of the spanmetrics variant: set TTFT_E2E=1 and OTELCOL_TTFT_SPANMETRICS_BIN (make test does)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("variant binary %s not found: %v", bin, err)
	}
	names := []string{"a2", "b2", "c", "f"}
	for _, n := range names {
		p, err := PipelineByName(n)
		require.NoError(t, err)
		require.True(t, p.Spanmetrics, n)
	}
	smokeTogether(t, Options{Spanmetrics: bin, Rate: 5000, Spans: 3000, Warmup: 500, SpansPerRequest: 100, Workers: 2, Dir: t.TempDir()}, names...)
}

func TestPipelinesAccountForTheirOwnComponents(t *testing.T) {
	for name, want := range map[string][2]bool{
		"a": {false, false}, "b": {true, true}, "c": {true, false}, "a2": {false, false},
		"b0": {true, true}, "bp": {true, false}, "bk": {false, true}, "bd": {true, true}, "bs": {true, true},
		"b2": {true, true}, "f": {false, false},
	} {
		p, err := PipelineByName(name)
		require.NoError(t, err)
		assert.Equal(t, want, [2]bool{p.runsOurProcessor(), p.runsOurConnector()}, name)
	}
	// (bs) is (b) with the plain spans' scope skipped by both components.
	bs, err := PipelineByName("bs")
	require.NoError(t, err)
	cfg := configFor(bs, 1, 2, 3)
	assert.Equal(t, 2, strings.Count(cfg, skipPlainScope), cfg)
	assert.Equal(t, configFor(Pipelines[1], 1, 2, 3), strings.ReplaceAll(cfg, skipPlainScope, ""))
}

// TestRenamedPipelinesShareTheirConfig: the controls and the baseline run
// (a)'s or (b)'s very configuration, on their own binary.
func TestRenamedPipelinesShareTheirConfig(t *testing.T) {
	for _, tc := range []struct {
		p, of       Pipeline
		spanmetrics bool
	}{{Control, Pipelines[0], true}, {ControlB, Pipelines[1], true}, {BaselineB, Pipelines[1], false}} {
		assert.Equal(t, configFor(tc.of, 1, 2, 3), configFor(tc.p, 1, 2, 3), tc.p.Name)
		assert.Equal(t, tc.spanmetrics, tc.p.Spanmetrics, tc.p.Name)
		assert.Equal(t, !tc.spanmetrics, tc.p.Baseline, tc.p.Name)
		assert.NotEqual(t, tc.of.Name, tc.p.Name)
	}
}
