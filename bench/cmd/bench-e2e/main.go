// Command bench-e2e runs the end-to-end CPU benchmark of the distribution
// (`make bench-e2e`): for each repetition and each mix, a fresh collector per
// pipeline on loopback receives a fixed-rate OTLP/HTTP load (by default all
// pipelines side by side, every request sent to each; -together=false runs
// them one after another in a rotating order), and their CPU seconds per
// million spans are compared.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/otelcol-ttft/otelcol-ttft/bench/e2eload"
)

func main() {
	var opts e2eload.Options
	flag.StringVar(&opts.Collector, "collector", "../dist/otelcol-ttft", "otelcol-ttft binary (make build)")
	flag.StringVar(&opts.Spanmetrics, "spanmetrics", "../dist/spanmetrics/otelcol-ttft-spanmetrics", "spanmetrics variant (bench/builder-spanmetrics.yaml)")
	flag.StringVar(&opts.Baseline, "baseline", "", "another otelcol-ttft build, for pipeline b0: (b) on it, beside (b) in the same run")
	flag.Float64Var(&opts.Rate, "rate", 5000, "spans a second sent")
	flag.IntVar(&opts.Spans, "spans", 100000, "spans measured per run")
	flag.IntVar(&opts.Warmup, "warmup", 5000, "spans sent before the measurement of each run")
	flag.IntVar(&opts.SpansPerRequest, "spans-per-request", 500, "spans in one OTLP request")
	flag.IntVar(&opts.Workers, "workers", 4, "concurrent requests at most")
	reps := flag.Int("reps", 5, "repetitions of every configuration")
	pipelines := flag.String("pipelines", "a,b,c", "pipelines to run (a, b, c; a2, b2: a or b on the spanmetrics variant; b0: b on the -baseline build; f: the floor of b's design, on the spanmetrics variant; bp, bk: b's processor or connector alone; bd: b without stamped_only; bs: b with derive::skip_scopes naming the plain spans' scope)")
	mixes := flag.String("mixes", "plain,95/5,genai", "mixes to run")
	together := flag.Bool("together", true, "run the pipelines side by side, each request sent to all at once (false: one after another)")
	flag.Parse()

	if err := run(opts, *reps, *pipelines, *mixes, *together); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e:", err)
		os.Exit(1)
	}
}

func run(opts e2eload.Options, reps int, pipelineNames, mixNames string, together bool) error {
	var ps []e2eload.Pipeline
	for _, n := range strings.Split(pipelineNames, ",") {
		p, err := e2eload.PipelineByName(n)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	var ms []e2eload.Mix
	for _, n := range strings.Split(mixNames, ",") {
		m, err := e2eload.MixByName(n)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	for _, p := range ps {
		bin := opts.Binary(p)
		if bin == "" {
			return fmt.Errorf("pipeline %s needs -baseline", p.Name)
		}
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("pipeline %s: %w (make bench-e2e builds it)", p.Name, err)
		}
	}
	dir, err := os.MkdirTemp("", "bench-e2e-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts.Dir = dir

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mode := "one after another"
	if together {
		mode = "side by side"
	}
	fmt.Fprintf(os.Stderr, "%d repetitions × %d mixes × %d pipelines %s, %d spans at %.0f spans/s each (+%d warm-up)\n",
		reps, len(ms), len(ps), mode, opts.Spans, opts.Rate, opts.Warmup)
	var runs []e2eload.Sample
	for rep := range reps {
		for _, m := range ms {
			// Rotate the order so no pipeline always runs (or is sent to) first.
			order := make([]e2eload.Pipeline, len(ps))
			for i := range ps {
				order[i] = ps[(i+rep)%len(ps)]
			}
			var rs []e2eload.Result
			if together {
				r, err := e2eload.RunTogether(ctx, order, m, opts)
				if err != nil {
					return fmt.Errorf("rep %d, mix %s: %w", rep+1, m.Name, err)
				}
				rs = r
			} else {
				for _, p := range order {
					r, err := e2eload.Run(ctx, p, m, opts)
					if err != nil {
						return fmt.Errorf("rep %d, mix %s, pipeline %s: %w", rep+1, m.Name, p.Name, err)
					}
					rs = append(rs, r)
				}
			}
			for _, r := range rs {
				fmt.Fprintf(os.Stderr, "rep %d  %-5s  %-2s  %7.2f CPU s/1M spans  (%.2f s CPU, %d spans, %d GenAI, %.0f spans/s, load %.1f)\n",
					rep+1, m.Name, r.Pipeline, r.CPUPerMillion(), r.CPUSeconds, r.Spans, r.GenAI, r.AchievedRate, r.LoadAvg[1])
				runs = append(runs, e2eload.Sample{Rep: rep, Result: r})
			}
		}
	}
	fmt.Println()
	e2eload.Report(os.Stdout, runs, ps, ms)
	return nil
}
