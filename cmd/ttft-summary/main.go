// Command ttft-summary scrapes the Prometheus endpoint of an otelcol-ttft
// collector and prints one row per target and prompt band: requests, the
// TTFT percentiles the collector computed, every recommended timeout, the cut
// ratio and the deadline margin, then per route the recommended gateway
// cutoff in milliseconds (for Bifrost, the routing rule's ttft_timeout_ms,
// in the releases that have one: v1.5.11 and v1.6.0 do not; -ttft-timeout-json
// prints each rule's update body). It refreshes until interrupted. It only
// reads: it never calls a gateway.
//
//	ttft-summary -url http://localhost:8889/metrics -interval 15s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// opts are the output options beyond the table.
var opts = struct {
	cutoffPolicy string
	cutoffJSON   bool
}{cutoffPolicy: "gateway_cutoff"}

func main() {
	url := flag.String("url", "http://localhost:8889/metrics", "Prometheus endpoint of the collector's prometheus exporter")
	interval := flag.Duration("interval", 15*time.Second, "time between refreshes")
	once := flag.Bool("once", false, "print one summary and exit")
	wait := flag.Duration("wait", 90*time.Second, "how long to wait for the first ttft_* series before giving up")
	minRequests := flag.Float64("min-requests", 100, "hide targets and bands with fewer requests (0 shows every row)")
	flag.StringVar(&opts.cutoffPolicy, "cutoff-policy", "gateway_cutoff", "policy whose recommendation is the per-route gateway cutoff")
	flag.BoolVar(&opts.cutoffJSON, "ttft-timeout-json", false, `also print, per route, the body {"ttft_timeout_ms": N} of a Bifrost routing-rule update (printed only; nothing is sent; Bifrost v1.5.11 and v1.6.0 have no such key)`)
	flag.Parse()
	if *interval <= 0 || *wait < 0 || *minRequests < 0 {
		fmt.Fprintln(os.Stderr, "ttft-summary: -interval must be > 0 (e.g. 15s), -wait and -min-requests >= 0")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *url, *interval, *wait, *minRequests, *once); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "ttft-summary:", err)
		os.Exit(1)
	}
}

// run prints a summary as soon as the endpoint serves ttft_* series, then
// every interval. It gives up only when nothing arrived within wait.
func run(ctx context.Context, w io.Writer, url string, interval, wait time.Duration, minRequests float64, once bool) error {
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(wait)
	printed := false
	for {
		s, err := scrape(ctx, client, url)
		switch {
		case err == nil && len(s.Rows) > 0:
			total := len(s.Rows)
			// Cutoffs from every row: hiding small rows from the table must
			// not change the cutoff a route needs.
			cs := Cutoffs(s, opts.cutoffPolicy)
			hidden := s.Filter(minRequests)
			fmt.Fprintf(w, "\n%s  %s  %d targets x bands", time.Now().UTC().Format("15:04:05 UTC"), url, total)
			if hidden > 0 {
				fmt.Fprintf(w, " (%d with fewer than %g requests hidden; -min-requests 0 shows them)", hidden, minRequests)
			}
			fmt.Fprintln(w)
			render(w, s)
			renderCutoffs(w, cs, opts.cutoffPolicy)
			if opts.cutoffJSON {
				fmt.Fprintln(w)
				renderCutoffJSON(w, cs)
			}
			printed = true
			if once {
				return nil
			}
		case !printed && time.Now().After(deadline):
			if err == nil {
				err = errors.New("no ttft_* series yet")
			}
			return fmt.Errorf("nothing to summarize after %s: %w", wait, err)
		case printed && err != nil:
			fmt.Fprintf(w, "\n%s  scrape failed: %v\n", time.Now().UTC().Format("15:04:05 UTC"), err)
		}
		next := interval
		if !printed {
			next = time.Second // poll quickly until the first summary
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(next):
		}
	}
}

func scrape(ctx context.Context, client *http.Client, url string) (*Summary, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format: native histograms are not needed here, only gauges and sums.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return Parse(resp.Body)
}
