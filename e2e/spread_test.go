package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TestAdversarialSpreadMeasurement is a measurement, not a CI test (it
// takes a minute of both CPUs): TTFT_SPREAD=1 runs it. 5,000 series (the
// default aggregation_cardinality_limit) each receive two stamped spans per
// window slice, TTFT alternating 1 µs / 3,000 s, over a whole window (24 s in
// 24 slices, so a minute stands for a day), with a flush every second. It
// reports the collector's peak RSS and the latency of every OTLP request:
// ingest stalls while a flush holds the aggregation lock.
// TTFT_SPREAD_BIN names a second binary to measure in the same run (a baseline).
func TestAdversarialSpreadMeasurement(t *testing.T) {
	if os.Getenv("TTFT_SPREAD") != "1" {
		t.Skip("a measurement: TTFT_SPREAD=1 runs it")
	}
	bins := []string{collectorBinary(t)}
	if b := os.Getenv("TTFT_SPREAD_BIN"); b != "" {
		bins = append(bins, b)
	}
	for _, bin := range bins {
		t.Run(bin, func(t *testing.T) {
			t.Setenv("OTELCOL_TTFT_BIN", bin)
			rss, lat := measureSpread(t)
			slices.Sort(lat)
			q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
			t.Logf("%s: peak RSS %.0f MiB; %d OTLP requests of 1,000 spans: p50 %v, p99 %v, max %v",
				bin, float64(rss)/(1<<20), len(lat), q(0.5), q(0.99), lat[len(lat)-1])
		})
	}
}

func measureSpread(t *testing.T) (peakRSS int64, latencies []time.Duration) {
	const series, perRequest = 5000, 1000
	port := freePort(t)
	col := startCollector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
connectors:
  genai_ttft:
    flush_interval: %s
    window: 24s
    window_slices: 24
exporters:
  debug:
    verbosity: basic
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [debug]
`, port, flushInterval()))
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
	waitFor(t, col, 30*time.Second, "OTLP/HTTP", func() error {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(nil)) //nolint:gosec // loopback
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	// Requests are built once: series s, request r of one slice.
	var bodies [][]byte
	for first := 0; first < series; first += perRequest {
		for _, ttft := range []float64{1e-6, 3000} {
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			for s := first; s < first+perRequest; s++ {
				forgedSpan(spans, s%250, "model-"+strconv.Itoa(s), func(a pcommon.Map) {
					a.PutDouble("ttft.time_to_first_content", ttft)
					a.PutDouble("ttft.time_to_first_chunk", ttft)
					a.PutDouble("ttft.max_chunk_gap", ttft)
					a.PutDouble("ttft.duration", 2*ttft+1)
				})
			}
			b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, b)
		}
	}
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() {
		var max int64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max
				return
			case <-tick.C:
				if v := rssOf(col.cmd.Process.Pid); v > max {
					max = v
				}
			}
		}
	}()
	// 26 slices of one second: each slice sends every body once.
	for slice := 0; slice < 26; slice++ {
		next := time.Now().Add(time.Second)
		for _, b := range bodies {
			start := time.Now()
			resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(b)) //nolint:gosec // loopback
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST: %s", resp.Status)
			}
			latencies = append(latencies, time.Since(start))
		}
		time.Sleep(time.Until(next))
	}
	close(stop)
	return <-peak, latencies
}

// flushInterval is 1s, or TTFT_SPREAD_FLUSH (e.g. 1h: the same load without
// flushes, the latency floor of the machine).
func flushInterval() string {
	if v := os.Getenv("TTFT_SPREAD_FLUSH"); v != "" {
		return v
	}
	return "1s"
}

// rssOf reads the resident set size of pid from /proc (bytes; 0 if unknown).
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
