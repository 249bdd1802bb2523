package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Prometheus label names of the connector's attributes (dots become underscores).
const (
	labelProvider   = "gen_ai_provider_name"
	labelModel      = "gen_ai_request_model"
	labelRoute      = "ttft_route"
	labelBand       = "ttft_prompt_band"
	labelMeasuredAt = "ttft_measured_at"
	labelPolicy     = "ttft_policy"
	labelOutcome    = "ttft_outcome"
	labelQuantile   = "quantile"
	labelCensored   = "ttft_censored"
	// Histogram inputs (the connector's metrics→metrics path).
	labelBound      = "ttft_quantile_bound"
	labelResolution = "ttft_resolution"
	labelFailedOver = "ttft_failed_over"
	labelObserver   = "ttft_observer"
)

// Target identifies one row: a target (route, model, provider) in one prompt band.
type Target struct {
	Route, Model, Provider, Band string
	// FailedOver marks a histogram source's fallback attempts (Bifrost
	// fallback_index > 0), kept apart from the primary attempts.
	FailedOver bool
	// Observer and Resolution are a histogram source's window (ttft_observer,
	// ttft_resolution): its own row, never merged with the exact window of
	// the same target and band, nor with another source's.
	Observer, Resolution string
	// Dims holds the values of the connector's other dimensions (say
	// service.name, served as service_name), "name=value" joined by
	// commas in name order: series that differ in one are different
	// targets, whose quantiles and recommendations do not merge.
	Dims string
}

// notDims are the labels a series of the connector carries besides its
// dimensions: the known target fields, what a metric splits a target by,
// and the instance every series of one endpoint shares (its scope labels,
// otel_scope_*, are left out by prefix).
var notDims = map[string]bool{
	labelProvider: true, labelModel: true, labelRoute: true, labelBand: true,
	labelFailedOver: true, labelObserver: true, labelResolution: true,
	labelMeasuredAt: true, labelPolicy: true, labelOutcome: true, labelQuantile: true,
	labelCensored: true, labelBound: true, "ttft_first_content_seen": true,
	"collector_instance_id": true, "job": true, "instance": true,
}

// dims renders the labels of l that are other dimensions (Target.Dims).
func dims(l map[string]string) string {
	var names []string
	for k := range l {
		if !notDims[k] && !strings.HasPrefix(k, "otel_scope_") {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + l[k])
	}
	return b.String()
}

// Clock holds what the collector reported for one target and band, measured
// at one clock (first_content or first_chunk).
type Clock struct {
	Quantiles map[string]float64 // "0.99" → seconds (a bucketed source: the interval's upper bound)
	// Lower holds a bucketed source's lower quantile bounds: the quantile
	// lies in (Lower[q], Quantiles[q]].
	Lower map[string]float64
	// Resolution is the connector's ttft.resolution (explicit_buckets,
	// exponential_buckets); empty for exact samples.
	Resolution  string
	Samples     float64 // successful requests in the window
	HasSamples  bool
	Recommended map[string]float64 // policy → seconds
	CutRatio    map[string]float64 // policy ("" when not split by policy) → share
	Margin      float64
	HasMargin   bool
}

func newClock() *Clock {
	return &Clock{Quantiles: map[string]float64{}, Lower: map[string]float64{}, Recommended: map[string]float64{}, CutRatio: map[string]float64{}}
}

// Row is one line of the summary.
type Row struct {
	Target
	Requests float64
	Failed   float64 // every outcome but complete
	// MeasuredAt is the clock the figures come from: first_content where the
	// collector has it, else first_chunk (a lower bound).
	MeasuredAt string
	Clock      *Clock
}

// Summary is one scrape, ready to print.
type Summary struct {
	Rows     []Row
	Policies []string // every policy seen, in a stable order
}

// Parse reads a Prometheus text exposition and builds the summary.
func Parse(r io.Reader) (*Summary, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse exposition: %w", err)
	}
	return Summarize(fams), nil
}

// family finds a metric by its base name whichever unit suffix the exporter added.
func family(fams map[string]*dto.MetricFamily, base string) *dto.MetricFamily {
	for _, name := range []string{base, base + "_seconds", base + "_ratio", base + "_total", base + "_1"} {
		if f, ok := fams[name]; ok {
			return f
		}
	}
	return nil
}

func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return math.NaN()
}

// Summarize groups the ttft_* families by target and band.
func Summarize(fams map[string]*dto.MetricFamily) *Summary {
	type clockKey struct {
		Target
		measuredAt string
	}
	clocks := map[clockKey]*Clock{}
	rows := map[Target]*Row{}
	policies := map[string]bool{}

	row := func(l map[string]string) *Row {
		t := Target{Route: l[labelRoute], Model: l[labelModel], Provider: l[labelProvider], Band: l[labelBand], FailedOver: l[labelFailedOver] == "true", Dims: dims(l)}
		if res := l[labelResolution]; res != "" {
			t.Observer, t.Resolution = l[labelObserver], res
		}
		r, ok := rows[t]
		if !ok {
			r = &Row{Target: t}
			rows[t] = r
		}
		return r
	}
	clock := func(l map[string]string) *Clock {
		r := row(l)
		k := clockKey{Target: r.Target, measuredAt: l[labelMeasuredAt]}
		c, ok := clocks[k]
		if !ok {
			c = newClock()
			clocks[k] = c
		}
		if res := l[labelResolution]; res != "" {
			c.Resolution = res
		}
		return c
	}
	each := func(base string, fn func(l map[string]string, v float64)) {
		f := family(fams, base)
		if f == nil {
			return
		}
		for _, m := range f.GetMetric() {
			v := value(m)
			if math.IsNaN(v) {
				continue
			}
			fn(labels(m), v)
		}
	}

	each("ttft_requests", func(l map[string]string, v float64) {
		r := row(l)
		r.Requests += v
		if l[labelOutcome] != "complete" {
			r.Failed += v
		}
	})
	each("ttft_quantile", func(l map[string]string, v float64) {
		q := normQuantile(l[labelQuantile])
		if l[labelBound] == "lower" {
			clock(l).Lower[q] = v
			return
		}
		clock(l).Quantiles[q] = v
	})
	each("ttft_window_samples", func(l map[string]string, v float64) {
		if l[labelCensored] == "true" {
			return // requests cut by a first-token timeout: counted under FAILED
		}
		c := clock(l)
		c.Samples += v
		c.HasSamples = true
	})
	each("ttft_timeout_recommended", func(l map[string]string, v float64) {
		clock(l).Recommended[l[labelPolicy]] = v
		policies[l[labelPolicy]] = true
	})
	each("ttft_timeout_cut_ratio", func(l map[string]string, v float64) {
		clock(l).CutRatio[l[labelPolicy]] = v
	})
	each("ttft_deadline_margin", func(l map[string]string, v float64) {
		c := clock(l)
		if !c.HasMargin || v < c.Margin { // the tightest margin when split further
			c.Margin, c.HasMargin = v, true
		}
	})

	out := &Summary{}
	for t, r := range rows {
		// Prefer the exact clock; fall back to the first-chunk lower bound;
		// series without the label apply to whichever is shown.
		for _, at := range []string{"first_content", "first_chunk", ""} {
			if c, ok := clocks[clockKey{Target: t, measuredAt: at}]; ok {
				r.MeasuredAt, r.Clock = at, c
				break
			}
		}
		if r.Clock == nil {
			r.Clock = newClock()
		}
		if r.Requests == 0 && r.Clock.Resolution != "" {
			// A histogram source has no request counter: what its window
			// counted is the number of requests it saw.
			r.Requests = r.Clock.Samples
		}
		if c, ok := clocks[clockKey{Target: t}]; ok && c != r.Clock {
			merge(r.Clock, c)
		}
		out.Rows = append(out.Rows, *r)
	}
	sort.Slice(out.Rows, func(i, j int) bool {
		a, b := out.Rows[i].Target, out.Rows[j].Target
		if a.Route != b.Route {
			return a.Route < b.Route
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.Band != b.Band {
			if oa, ob := bandOrder(a.Band), bandOrder(b.Band); oa != ob {
				return oa < ob
			}
			return a.Band < b.Band // "all", "unknown": both last
		}
		if a.Resolution != b.Resolution {
			return a.Resolution < b.Resolution // the exact window first
		}
		if a.Observer != b.Observer {
			return a.Observer < b.Observer
		}
		if a.Dims != b.Dims {
			return a.Dims < b.Dims
		}
		return !a.FailedOver && b.FailedOver
	})
	for p := range policies {
		out.Policies = append(out.Policies, p)
	}
	sort.Slice(out.Policies, func(i, j int) bool { return policyOrder(out.Policies[i]) < policyOrder(out.Policies[j]) })
	return out
}

func merge(dst, src *Clock) {
	for k, v := range src.Quantiles {
		if _, ok := dst.Quantiles[k]; !ok {
			dst.Quantiles[k] = v
		}
	}
	for k, v := range src.Lower {
		if _, ok := dst.Lower[k]; !ok {
			dst.Lower[k] = v
		}
	}
	if dst.Resolution == "" {
		dst.Resolution = src.Resolution
	}
	for k, v := range src.Recommended {
		if _, ok := dst.Recommended[k]; !ok {
			dst.Recommended[k] = v
		}
	}
	for k, v := range src.CutRatio {
		if _, ok := dst.CutRatio[k]; !ok {
			dst.CutRatio[k] = v
		}
	}
	if !dst.HasSamples && src.HasSamples {
		dst.Samples, dst.HasSamples = src.Samples, true
	}
	if !dst.HasMargin && src.HasMargin {
		dst.Margin, dst.HasMargin = src.Margin, true
	}
}

// normQuantile writes "0.990" and "0.99" the same way.
func normQuantile(q string) string {
	f, err := strconv.ParseFloat(q, 64)
	if err != nil {
		return q
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// bandOrder sorts bands by their lower edge: "<2k", "2k-16k", …, ">=64k", then "unknown".
func bandOrder(b string) float64 {
	switch {
	case strings.HasPrefix(b, "<"):
		return 0
	case strings.HasPrefix(b, ">="):
		return tokens(strings.TrimPrefix(b, ">=")) + 0.5
	case strings.Contains(b, "-"):
		return tokens(b[:strings.Index(b, "-")])
	}
	return math.Inf(1)
}

func tokens(s string) float64 {
	mult := 1.0
	if strings.HasSuffix(s, "k") {
		s, mult = strings.TrimSuffix(s, "k"), 1000
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.Inf(1)
	}
	return f * mult
}

// policyOrder puts the default policies first, in the order docs/architecture.md §8 lists them.
func policyOrder(p string) string {
	switch p {
	case "first_token":
		return "0"
	case "gateway_cutoff":
		return "1"
	case "idle":
		return "2"
	}
	return "3" + p
}

// Filter drops rows with fewer than minRequests requests, unless that would
// drop every row. It returns how many rows it dropped.
func (s *Summary) Filter(minRequests float64) int {
	var kept []Row
	for _, r := range s.Rows {
		if r.Requests >= minRequests {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return 0
	}
	dropped := len(s.Rows) - len(kept)
	s.Rows = kept
	return dropped
}

// render prints the summary as an aligned table. Each policy column reads
// "timeout (cut ratio)"; "-" means the window does not hold enough samples.
func render(w io.Writer, s *Summary) {
	withDims := false
	for _, r := range s.Rows {
		withDims = withDims || r.Dims != ""
	}
	head := []string{"ROUTE", "MODEL", "PROVIDER", "BAND", "CLOCK", "REQUESTS", "FAILED", "WINDOW", "P50", "P99", "P99.9"}
	textCols := 5
	if withDims {
		// Other dimensions of the connector: one row per value.
		head = slices.Insert(head, 3, "DIMS")
		textCols++
	}
	for _, p := range s.Policies {
		head = append(head, strings.ToUpper(p))
	}
	head = append(head, "MARGIN")
	table := [][]string{head}
	for _, r := range s.Rows {
		c := r.Clock
		model, failed := orDash(r.Model), percent(r.Failed, r.Requests)
		if r.FailedOver {
			model += " (fallback)"
		}
		if c.Resolution != "" {
			failed = "-" // a histogram carries no outcomes
		}
		clock := clockName(r.MeasuredAt)
		if r.Observer != "" {
			clock += " (" + cellText(r.Observer) + ")" // a histogram source's window: where its clock ran
		}
		cells := []string{
			cellText(orDash(r.Route)), cellText(model), cellText(orDash(r.Provider)), cellText(orDash(r.Band)), clock,
			strconv.FormatFloat(r.Requests, 'f', 0, 64), failed,
			samples(c),
			quantileCell(c, "0.5"), quantileCell(c, "0.99"), quantileCell(c, "0.999"),
		}
		if withDims {
			cells = slices.Insert(cells, 3, cellText(orDash(r.Dims)))
		}
		for _, p := range s.Policies {
			cell := "-"
			if v, ok := c.Recommended[p]; ok {
				cell = duration(v)
				cut, ok := c.CutRatio[p]
				if !ok {
					cut, ok = c.CutRatio[""]
				}
				if ok {
					cell += " (" + share(cut) + " cut)"
				}
			}
			cells = append(cells, cell)
		}
		margin := "-"
		if c.HasMargin {
			margin = duration(c.Margin)
		}
		cells = append(cells, margin)
		table = append(table, cells)
	}
	writeTable(w, table, textCols)
	for _, r := range s.Rows {
		if r.MeasuredAt == "first_chunk" {
			fmt.Fprintln(w, "chunk*: the source only knows its first chunk of any kind, a lower bound on first-content TTFT")
			break
		}
	}
	for _, r := range s.Rows {
		if r.Clock.Resolution != "" {
			fmt.Fprintln(w, "(a, b]: from a histogram's buckets, the quantile lies in that interval; its recommendations start from the upper bound")
			break
		}
	}
}

// quantileCell is a quantile, or for a bucketed source the interval it lies in.
func quantileCell(c *Clock, q string) string {
	up, ok := c.Quantiles[q]
	lo, hasLo := c.Lower[q]
	if !ok {
		if hasLo {
			return "> " + duration(lo) // in the open-ended last bucket
		}
		return "-"
	}
	if !hasLo {
		return duration(up)
	}
	return "(" + duration(lo) + ", " + duration(up) + "]"
}

// writeTable aligns columns: the first textCols to the left, numbers to the right.
func writeTable(w io.Writer, table [][]string, textCols int) {
	widths := make([]int, len(table[0]))
	for _, row := range table {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < textCols {
				b.WriteString(cell + pad)
			} else {
				b.WriteString(pad + cell)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

func clockName(at string) string {
	switch at {
	case "first_content":
		return "content"
	case "first_chunk":
		return "chunk*"
	}
	return "-"
}

// cellText is a label value as a table cell: quoted when it holds a
// control character (a newline would cut the row in two).
func cellText(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func samples(c *Clock) string {
	if !c.HasSamples {
		return "-"
	}
	return strconv.FormatFloat(c.Samples, 'f', 0, 64)
}

func seconds(m map[string]float64, q string) string {
	v, ok := m[q]
	if !ok {
		return "-"
	}
	return duration(v)
}

// duration prints seconds the way people read latencies: 850ms, 1.24s, 12.5s, 120s.
func duration(s float64) string {
	a := math.Abs(s)
	switch {
	case math.IsNaN(s):
		return "-"
	case a > 1e6: // past 11 days: no TTFT; printed short, not in 300 digits
		return strconv.FormatFloat(s, 'g', 3, 64) + "s"
	case a < 1:
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + "ms"
	case a < 10:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	case a < 100:
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	}
	return strconv.FormatFloat(s, 'f', 0, 64) + "s"
}

func percent(part, whole float64) string {
	if whole == 0 {
		return "-"
	}
	return share(part / whole)
}

func share(r float64) string {
	p := r * 100
	if p != 0 && p < 0.1 {
		return strconv.FormatFloat(p, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}
