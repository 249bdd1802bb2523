// Package e2eload measures the built distribution end to end: a local sender
// posts pre-encoded OTLP/HTTP protobuf requests at a fixed rate to a
// collector on loopback, and the collector process's CPU seconds
// (utime+stime from /proc) per million spans are compared between
// pipelines in the same run. `make bench-e2e` runs it (cmd/bench-e2e).
package e2eload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options of one measured run.
type Options struct {
	// Collector is the otelcol-ttft binary; Spanmetrics the variant built
	// from bench/builder-spanmetrics.yaml (needed for pipeline c only);
	// Baseline another otelcol-ttft build (needed for pipeline b0 only).
	Collector, Spanmetrics, Baseline string
	Rate                             float64 // spans a second the sender aims at
	Spans                            int     // spans sent in the measured window
	Warmup                           int     // spans sent before it (not measured)
	SpansPerRequest                  int
	Workers                          int // concurrent requests at most
	Dir                              string
}

// Result of one run.
type Result struct {
	Pipeline, Mix string
	Spans, GenAI  int     // sent in the measured window (all accepted and exported)
	CPUSeconds    float64 // collector CPU over the window, all threads (cpuSeconds)
	IdleCPUPerSec float64 // the collector's CPU seconds a second before any load
	Wall          time.Duration
	AchievedRate  float64 // spans a second the sender held
	PeakRSSMiB    float64
	SenderCPU     float64 // this process's CPU seconds over the window
	LoadAvg       [2]float64
}

// Binary is the collector binary pipeline p runs on.
func (o Options) Binary(p Pipeline) string {
	switch {
	case p.Spanmetrics:
		return o.Spanmetrics
	case p.Baseline:
		return o.Baseline
	}
	return o.Collector
}

func (p Pipeline) binaryName() string {
	switch {
	case p.Spanmetrics:
		return "spanmetrics variant"
	case p.Baseline:
		return "baseline otelcol-ttft (-baseline)"
	}
	return "otelcol-ttft"
}

// CPUPerMillion is collector CPU seconds per million spans.
func (r Result) CPUPerMillion() float64 { return r.CPUSeconds / float64(r.Spans) * 1e6 }

var ticksPerSecond = sync.OnceValue(clockTicks)

// Run starts the pipeline's collector, warms it up, sends opts.Spans spans
// of the mix at opts.Rate and measures the collector's CPU until it has
// processed all of them. It fails when any span was refused, not exported,
// or (with our components) not derived and aggregated, so dropped load can
// never look cheap.
func Run(ctx context.Context, p Pipeline, mix Mix, opts Options) (Result, error) {
	rs, err := RunTogether(ctx, []Pipeline{p}, mix, opts)
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// RunTogether is Run for several pipelines at once: one collector each, and
// every request of the load goes to each of them at the same moment, so the
// load of other processes on a shared machine hits all of them alike.
func RunTogether(ctx context.Context, ps []Pipeline, mix Mix, opts Options) ([]Result, error) {
	bodies, err := Bodies(mix, opts.SpansPerRequest, 8, time.Now())
	if err != nil {
		return nil, err
	}
	cols := make([]*collector, 0, len(ps))
	defer func() {
		for _, c := range cols {
			c.stop()
		}
	}()
	urls := make([]string, 0, len(ps))
	for _, p := range ps {
		bin := opts.Binary(p)
		if bin == "" {
			return nil, fmt.Errorf("pipeline %s needs the %s binary", p.Name, p.binaryName())
		}
		col, err := startCollector(ctx, bin, opts.Dir, p)
		if err != nil {
			return nil, fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
		cols = append(cols, col)
		urls = append(urls, col.otlpURL)
	}
	ticks := ticksPerSecond()
	res := make([]Result, len(ps))
	snap := func() ([]procStat, error) {
		out := make([]procStat, len(cols))
		for i, c := range cols {
			st, err := readProc(c.pid())
			if err != nil {
				return nil, err
			}
			out[i] = st
		}
		return out, nil
	}

	idle0, err := snap()
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	idle1, err := snap()
	if err != nil {
		return nil, err
	}

	workers := opts.Workers * len(cols)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: opts.Workers, DisableCompression: true}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	settleAll := func(sent counts) ([]procStat, error) {
		out := make([]procStat, len(cols))
		for i, c := range cols {
			st, err := settle(ctx, c, ps[i], sent)
			if err != nil {
				return nil, fmt.Errorf("pipeline %s: %w", ps[i].Name, err)
			}
			out[i] = st
		}
		return out, nil
	}

	var sent counts
	if opts.Warmup > 0 {
		w, err := send(ctx, client, urls, bodies, opts.Warmup, opts.Rate, workers)
		if err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		sent = sent.add(w)
		if _, err := settleAll(sent); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}

	before, err := snap()
	if err != nil {
		return nil, err
	}
	self0, _ := readProc(os.Getpid())
	load0 := loadAvg()
	t0 := time.Now()
	w, err := send(ctx, client, urls, bodies, opts.Spans, opts.Rate, workers)
	if err != nil {
		return nil, err
	}
	sendWall := time.Since(t0)
	sent = sent.add(w)
	after, err := settleAll(sent)
	if err != nil {
		return nil, err
	}
	self1, _ := readProc(os.Getpid())
	load1 := loadAvg()
	for i, p := range ps {
		res[i] = Result{
			Pipeline: p.Name, Mix: mix.Name,
			Spans: w.spans, GenAI: w.genai,
			CPUSeconds:    cpuSeconds(before[i], after[i], ticks),
			IdleCPUPerSec: cpuSeconds(idle0[i], idle1[i], ticks),
			Wall:          time.Since(t0),
			AchievedRate:  float64(w.spans) / sendWall.Seconds(),
			PeakRSSMiB:    float64(after[i].peakKB) / 1024,
			SenderCPU:     cpuSeconds(self0, self1, ticks) / float64(len(ps)),
			LoadAvg:       [2]float64{load0, load1},
		}
	}

	for i, p := range ps {
		if p.Name != "c" {
			continue
		}
		// spanmetrics has no telemetry of its own: its calls counter must
		// have counted every span. Through the prometheus exporter the first
		// flush shows the calls counters at 0, so allow two.
		if err := waitMetric(ctx, cols[i], cols[i].prometheusURL, "traces_span_metrics_calls", float64(sent.spans), 2*flushInterval+10*time.Second); err != nil {
			return nil, fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
	}
	return res, nil
}

type counts struct{ spans, genai int }

func (c counts) add(d counts) counts { return counts{c.spans + d.spans, c.genai + d.genai} }

// send posts requests cycling over bodies until n spans went out, each
// request to every url, paced to rate spans a second (a request is due at a
// fixed time from the start; a late one goes at once, so the average rate
// holds when the collectors keep up). Any non-200 answer fails the run.
func send(ctx context.Context, client *http.Client, urls []string, bodies []Body, n int, rate float64, workers int) (counts, error) {
	type job struct {
		url  string
		body Body
	}
	jobs := make(chan job)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := post(ctx, client, j.url, j.body.Data); err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	var c counts
	start := time.Now()
	// Bounded in time as in count: four times the planned duration.
	limit := start.Add(time.Duration(4*float64(n)/rate*float64(time.Second)) + 10*time.Second)
	var err error
	for i := 0; c.spans < n; i++ {
		if failed.Load() != nil {
			break
		}
		due := start.Add(time.Duration(float64(c.spans) / rate * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		if time.Now().After(limit) {
			err = fmt.Errorf("sender could not send %d spans in %s (collector too slow for %.0f spans/s)", n, limit.Sub(start).Round(time.Second), rate)
			break
		}
		b := bodies[i%len(bodies)]
		for _, url := range urls {
			select {
			case jobs <- job{url, b}:
			case <-ctx.Done():
				err = ctx.Err()
			}
			if err != nil {
				break
			}
		}
		if err != nil {
			break
		}
		c.spans += b.Spans
		c.genai += b.GenAI
	}
	close(jobs)
	wg.Wait()
	if p := failed.Load(); p != nil {
		return c, *p
	}
	return c, err
}

func post(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

// settle waits until the collector is idle and its own metrics account for
// every span sent, and returns its /proc counters at that moment. Idle
// first, then a scrape: the scrapes do not land in the window unless a
// batch was still pending.
func settle(ctx context.Context, col *collector, p Pipeline, sent counts) (procStat, error) {
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		st, err := waitIdle(col)
		if err != nil {
			return st, err
		}
		m, err := col.metrics(ctx, col.telemetryURL)
		if err != nil {
			return st, err
		}
		if lastErr = accounted(m, p, sent); lastErr == nil {
			return st, nil
		}
	}
	return procStat{}, fmt.Errorf("collector did not account for every span within 60s: %w", lastErr)
}

// waitIdle returns once the collector used at most one clock tick in 300 ms.
func waitIdle(col *collector) (procStat, error) {
	prev, err := readProc(col.pid())
	if err != nil {
		return prev, err
	}
	for {
		time.Sleep(300 * time.Millisecond)
		cur, err := readProc(col.pid())
		if err != nil {
			return cur, err
		}
		if cur.ticks-prev.ticks <= 1 {
			return cur, nil
		}
		prev = cur
	}
}

// accounted checks the collector's own counters against what was sent.
func accounted(m map[string]float64, p Pipeline, sent counts) error {
	want := []struct {
		metric string
		n      int
	}{
		{"otelcol_receiver_accepted_spans", sent.spans},
		{"otelcol_exporter_sent_spans", sent.spans},
	}
	if p.runsOurProcessor() {
		want = append(want, struct {
			metric string
			n      int
		}{"otelcol_processor_genai_ttft_spans_derived", sent.genai})
	}
	if p.runsOurConnector() {
		want = append(want, struct {
			metric string
			n      int
		}{"otelcol_connector_genai_ttft_records", sent.genai})
	}
	var errs []error
	for _, w := range want {
		if got := m[w.metric]; got != float64(w.n) {
			errs = append(errs, fmt.Errorf("%s = %.0f, want %d", w.metric, got, w.n))
		}
	}
	if refused := m["otelcol_receiver_refused_spans"] + m["otelcol_exporter_send_failed_spans"]; refused > 0 {
		return fmt.Errorf("%.0f spans refused or failed", refused)
	}
	return errors.Join(errs...)
}

func waitMetric(ctx context.Context, col *collector, url, metric string, want float64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var got float64
	var names []string
	for time.Now().Before(deadline) {
		m, err := col.metrics(ctx, url)
		if err != nil {
			return err
		}
		if got = m[metric]; got == want {
			return nil
		}
		names = slices.Sorted(maps.Keys(m))
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("%s = %.0f after %s, want %.0f (metrics there: %s)", metric, got, limit, want, strings.Join(names, ", "))
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	var v float64
	_, _ = fmt.Sscan(strings.Fields(string(b))[0], &v)
	return v
}
