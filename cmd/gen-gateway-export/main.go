// Command gen-gateway-export writes a deterministic, realistic gateway request
// export in the infro_csv format read by the llm_gateway_log receiver.
//
//	gen-gateway-export -rows 100000 -seed 1 -start 2026-11-30T00:00:00Z -out export.csv
//
// The same flags always produce the same bytes. Flags are stable: scripts
// (make run's sample data) depend on them.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen-gateway-export:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen-gateway-export", flag.ContinueOnError)
	rows := fs.Int("rows", 10000, "number of request rows")
	seed := fs.Uint64("seed", 1, "random seed; the same seed gives the same export")
	out := fs.String("out", "-", "output file, - for stdout")
	start := fs.String("start", "", "created_at of the first row, RFC 3339 (default: -span before now, truncated to the minute)")
	span := fs.Duration("span", 24*time.Hour, "time the rows are spread over")
	noHeader := fs.Bool("no-header", false, "omit the header line (to append to an existing export)")
	firstID := fs.Int("first-id", 1, "request id of the first row (keep ids unique when appending)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rows < 0 {
		return fmt.Errorf("-rows must be >= 0, got %d", *rows)
	}
	if *span <= 0 {
		return fmt.Errorf("-span must be > 0, got %s", *span)
	}
	var t0 time.Time
	if *start == "" {
		t0 = time.Now().UTC().Add(-*span).Truncate(time.Minute)
	} else {
		var err error
		if t0, err = time.Parse(time.RFC3339Nano, *start); err != nil {
			return fmt.Errorf("-start must be RFC 3339 such as 2026-11-30T00:00:00Z: %w", err)
		}
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	_, err := gatewayexport.Write(w, gatewayexport.Options{
		Rows: *rows, Seed: *seed, Start: t0, Span: *span, Header: !*noHeader, FirstID: *firstID,
	})
	return err
}
