package genaittftconnector

import (
	"context"
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// fuzzBytes hands out a fuzz input byte by byte, zeros once it is used up.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) u64() uint64 {
	var buf [8]byte
	n := copy(buf[:], f.b)
	f.b = f.b[n:]
	return binary.LittleEndian.Uint64(buf[:])
}

// count is a bucket count: mostly small, now and then absurd.
func (f *fuzzBytes) count() uint64 {
	c := f.byte()
	switch {
	case c == 0xff:
		return f.u64()
	case c >= 0xf0:
		return uint64(c) << 40
	}
	return uint64(c % 16)
}

// fuzzLayouts are the explicit layouts a point picks from: Bifrost's, one
// it refines, a coarser one, one sharing no bound, and (index 4) bounds
// read from the input, NaN, negative and unsorted ones included.
var fuzzLayouts = [][]float64{
	bifrostBounds,
	{0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300},
	{0.1, 1, 10},
	{0.003, 0.03, 0.3, 3},
}

// fuzzPoint appends one TTFT histogram point read from f to md and returns
// its model and how many samples it states at most.
func fuzzPoint(f *fuzzBytes, md pmetric.Metrics, now time.Time) (model string, offered uint64) {
	sel := f.byte()
	model = "m" + strconv.Itoa(int(sel%4))
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "gw")
	rm.Resource().Attributes().PutStr("service.instance.id", strconv.Itoa(int(sel>>2)%2))
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	flags := f.byte()
	start := pcommon.Timestamp(0)
	switch flags % 4 {
	case 1:
		start = pcommon.NewTimestampFromTime(testStart)
	case 2:
		start = pcommon.NewTimestampFromTime(now.Add(-time.Duration(f.byte()) * time.Second))
	case 3:
		start = pcommon.Timestamp(f.u64())
	}
	ts := pcommon.NewTimestampFromTime(now.Add(time.Duration(int8(f.byte())) * time.Second))
	temporality := pmetric.AggregationTemporalityCumulative
	if flags&4 != 0 {
		temporality = pmetric.AggregationTemporalityDelta
	}
	var attrs pcommon.Map
	var pflags pmetric.DataPointFlags
	if flags&0xf0 == 0xf0 {
		pflags = pmetric.DefaultDataPointFlags.WithNoRecordedValue(true)
	}
	var sum uint64
	add := func(c uint64) uint64 {
		if sum+c < sum {
			sum = math.MaxUint64
		} else {
			sum += c
		}
		return c
	}
	if flags&8 == 0 {
		m.SetName("bifrost_stream_first_token_latency_seconds")
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(temporality)
		dp := h.DataPoints().AppendEmpty()
		attrs = dp.Attributes()
		attrs.PutStr("provider", "openai")
		attrs.PutStr("model", model)
		attrs.PutStr("fallback_index", strconv.Itoa(int(flags>>5)%2))
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetFlags(pflags)
		shape := f.byte()
		var bounds []float64
		if i := int(shape % 5); i < len(fuzzLayouts) {
			bounds = fuzzLayouts[i]
		} else {
			for range int(f.byte() % 8) {
				bounds = append(bounds, math.Float64frombits(f.u64()))
			}
		}
		dp.ExplicitBounds().FromRaw(bounds)
		n := len(bounds) + 1
		if shape&0x80 != 0 {
			n = int(shape>>3) % 20 // a bucket count that may not fit the bounds
		}
		for range n {
			dp.BucketCounts().Append(add(f.count()))
		}
		dp.SetCount(sum)
		if shape&0x40 != 0 {
			dp.SetCount(sum + 1)
		}
		return model, max(sum, dp.Count())
	}
	m.SetName("gen_ai.client.operation.time_to_first_chunk")
	m.SetUnit("s")
	eh := m.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(temporality)
	dp := eh.DataPoints().AppendEmpty()
	attrs = dp.Attributes()
	attrs.PutStr("gen_ai.provider.name", "openai")
	attrs.PutStr("gen_ai.request.model", model)
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetFlags(pflags)
	dp.SetScale(int32(int8(f.byte())) % 24)
	dp.Positive().SetOffset(int32(int16(binary.LittleEndian.Uint16([]byte{f.byte(), f.byte()}))))
	for range int(f.byte() % 48) {
		dp.Positive().BucketCounts().Append(add(f.count()))
	}
	shape := f.byte()
	if shape&1 != 0 {
		dp.SetZeroCount(add(f.count()))
	}
	if shape&2 != 0 {
		dp.SetZeroThreshold(math.Float64frombits(f.u64()))
	}
	if shape&4 != 0 {
		dp.Negative().BucketCounts().Append(add(f.count()))
	}
	dp.SetCount(sum)
	if shape&8 != 0 {
		dp.SetCount(sum + 1)
	}
	return model, max(sum, dp.Count())
}

// Seeds in fuzzPoint's encoding: op 1 is a batch of one point, op 4 a
// 20 s step of the clock and a flush. Flag bits: 0–1 the start time (0
// none, 1 the connector's start, 2 a byte of seconds back), 4 delta, 8
// exponential, 0xf0 a staleness marker.
func explicitSeed(model, flags, tsStep, layout byte, counts ...byte) []byte {
	b := []byte{1, model, flags}
	if flags%4 == 2 {
		b = append(b, 30)
	}
	b = append(b, tsStep, layout)
	return append(b, counts...)
}

func expoSeed(model, flags, tsStep, scale byte, offset int16, counts ...byte) []byte {
	b := []byte{1, model, flags | 8}
	if flags%4 == 2 {
		b = append(b, 30)
	}
	b = append(b, tsStep, scale, byte(offset), byte(uint16(offset)>>8), byte(len(counts)))
	return append(append(b, counts...), 1, 3) // and a zero bucket of 3
}

var flushSeed = []byte{4}

func join(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// histogramFuzzSeeds start FuzzHistogramInputs: delta points, cumulative
// growth, a refining and a foreign layout, exponential points at two
// scales, a restart and a staleness marker.
var histogramFuzzSeeds = [][]byte{
	join(explicitSeed(0, 4, 0, 0, 0, 0, 1, 3, 5, 8, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0), flushSeed),
	join(explicitSeed(1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
		explicitSeed(1, 1, 10, 0, 0, 2, 3, 4, 5, 6, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), flushSeed,
		explicitSeed(1, 1, 20, 1, 0, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), flushSeed),
	join(expoSeed(2, 4, 0, 3, -10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), expoSeed(2, 4, 1, 0xfe, -3, 4, 4, 4), flushSeed),
	join(explicitSeed(3, 2, 0, 0, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5), explicitSeed(3, 0xf2, 5, 0, make([]byte, 17)...), flushSeed,
		explicitSeed(3, 2, 10, 3, 1, 2, 3, 4, 5), explicitSeed(3, 1, 30, 2, 9, 9, 9, 9), flushSeed),
}

// FuzzHistogramInputs feeds sequences of TTFT histogram points (explicit
// and exponential, cumulative and delta, restarts, staleness markers, out
// of order and absurd times, foreign layouts, absurd counts, bounds and
// scales) through the metrics→metrics connector with small limits, and
// checks after every flush: no gauge is NaN, infinite or negative; no
// target's window holds more samples than its points stated; quantile
// bounds are ordered (lower ≤ upper, and by quantile); a cut ratio is a
// ratio; the state stays within source_series_limit and maxLayouts.
func FuzzHistogramInputs(f *testing.F) {
	for _, seed := range histogramFuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHistogramSequence(t, data) })
}

// fuzzHistogramSequence runs one input of FuzzHistogramInputs and returns
// the most samples one flush showed, summed over the targets.
func fuzzHistogramSequence(t *testing.T, data []byte) (most float64) {
	tel := componenttest.NewTelemetry()
	defer func() { _ = tel.Shutdown(context.Background()) }()
	clock := clockwork.NewFakeClockAt(testStart)
	cfg := defaultConfig()
	cfg.Histograms.MaxBuckets = 32
	cfg.Histograms.SourceSeriesLimit = 5
	cfg.Histograms.StaleAfter = 2 * time.Minute
	cfg.AggregationCardinalityLimit = 6
	cfg.MinSamples = 2
	c, sink := newMetricsConnector(t, cfg, clock, tel)
	in := &fuzzBytes{b: data}
	offered := map[string]uint64{}
	ctx := context.Background()
	for ops := 0; len(in.b) > 0 && ops < 64; ops++ {
		op := in.byte()
		if op%4 == 0 {
			clock.Advance(time.Duration(op) * 5 * time.Second)
			most = max(most, checkHistogramFlush(t, flushNow(t, c, sink), offered, cfg.Derive.MaxTTFTSeconds))
			continue
		}
		md := pmetric.NewMetrics()
		for range int(op % 4) {
			model, n := fuzzPoint(in, md, clock.Now())
			offered[model] = satAdd(offered[model], n)
		}
		if err := c.ConsumeMetrics(ctx, md); err != nil {
			t.Fatal(err)
		}
		hin := c.agg.hin
		if len(hin.sources) > cfg.Histograms.SourceSeriesLimit {
			t.Fatalf("%d source series held, limit %d", len(hin.sources), cfg.Histograms.SourceSeriesLimit)
		}
		if len(hin.forgotten) > cfg.Histograms.SourceSeriesLimit {
			t.Fatalf("%d tombstones held, limit %d", len(hin.forgotten), cfg.Histograms.SourceSeriesLimit)
		}
		for _, s := range hin.windows.series.byKey {
			if len(s.layouts) > maxLayouts {
				t.Fatalf("a series holds %d layouts, at most %d", len(s.layouts), maxLayouts)
			}
		}
	}
	clock.Advance(time.Minute)
	return max(most, checkHistogramFlush(t, flushNow(t, c, sink), offered, cfg.Derive.MaxTTFTSeconds))
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// checkHistogramFlush checks one flush of histogram windows (see
// FuzzHistogramInputs) and returns the samples it shows.
func checkHistogramFlush(t *testing.T, md pmetric.Metrics, offered map[string]uint64, maxTTFT float64) (total float64) {
	t.Helper()
	for _, name := range []string{gaugeSamples.name, gaugeQuantile.name, gaugeRecommended.name, gaugeCutRatio.name} {
		for _, p := range points(md, name) {
			if math.IsNaN(p.value) || math.IsInf(p.value, 0) || p.value < 0 {
				t.Fatalf("%s = %v (%v)", name, p.value, p.attrs)
			}
			if name == gaugeCutRatio.name && p.value > 1 {
				t.Fatalf("cut ratio %v (%v)", p.value, p.attrs)
			}
			if name == gaugeQuantile.name && p.value > maxTTFT {
				t.Fatalf("quantile %v above derive::max_ttft_seconds %v (%v)", p.value, maxTTFT, p.attrs)
			}
		}
	}
	windowed := map[string]float64{}
	for _, p := range points(md, gaugeSamples.name) {
		m, _ := p.attrs[record.KeyModel].(string)
		windowed[m] += p.value
		total += p.value
	}
	for m, n := range windowed {
		if _, known := offered[m]; !known {
			continue // the cardinality limit's overflow series
		}
		if n > float64(offered[m])*(1+1e-12) {
			t.Fatalf("model %s: %v samples windowed, its points stated %d", m, n, offered[m])
		}
	}
	// Quantile bounds per series: lower ≤ upper, and both rise with the quantile.
	type qb struct {
		q            float64
		lower, upper float64
		hasUpper     bool
	}
	bySeries := map[string]map[float64]*qb{}
	for _, p := range points(md, gaugeQuantile.name) {
		key := seriesKeyWithout(p.attrs, attrQuantile, attrQuantileBound)
		q, err := strconv.ParseFloat(p.attrs[attrQuantile].(string), 64)
		if err != nil {
			t.Fatal(err)
		}
		if bySeries[key] == nil {
			bySeries[key] = map[float64]*qb{}
		}
		e := bySeries[key][q]
		if e == nil {
			e = &qb{q: q}
			bySeries[key][q] = e
		}
		if p.attrs[attrQuantileBound] == "upper" {
			e.upper, e.hasUpper = p.value, true
		} else {
			e.lower = p.value
		}
	}
	for key, qs := range bySeries {
		list := make([]*qb, 0, len(qs))
		for _, e := range qs {
			if e.hasUpper && e.lower > e.upper {
				t.Fatalf("%s q%v: lower %v > upper %v", key, e.q, e.lower, e.upper)
			}
			list = append(list, e)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].q < list[j].q })
		for i := 1; i < len(list); i++ {
			a, b := list[i-1], list[i]
			if a.lower > b.lower || (a.hasUpper && b.hasUpper && a.upper > b.upper) {
				t.Fatalf("%s: q%v [%v, %v] above q%v [%v, %v]", key, a.q, a.lower, a.upper, b.q, b.lower, b.upper)
			}
		}
	}
	return total
}

// seriesKeyWithout is a point's attributes, but the given keys, as one string.
func seriesKeyWithout(attrs map[string]any, drop ...string) string {
	keys := make([]string, 0, len(attrs))
next:
	for k := range attrs {
		for _, d := range drop {
			if k == d {
				continue next
			}
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s string
	for _, k := range keys {
		s += k + "=" + toString(attrs[k]) + ";"
	}
	return s
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return "?"
}

// TestHistogramFuzzSeedsReachTheWindows: the seeds of FuzzHistogramInputs
// get samples into the windows, so the fuzzer starts from inputs that reach
// every check, not from points all refused.
func TestHistogramFuzzSeedsReachTheWindows(t *testing.T) {
	for i, seed := range histogramFuzzSeeds {
		if got := fuzzHistogramSequence(t, seed); got == 0 {
			t.Errorf("seed %d windows no sample", i)
		}
	}
}
