package e2eload

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Sample is a run's result, kept with its repetition so ratios pair runs that
// were measured close in time.
type Sample struct {
	Rep int
	Result
}

// Goal is a ratio the issue sets: Num/Den CPU per span at the mix, at most Max.
type Goal struct {
	Mix, Num, Den string
	Max           float64
}

// Goals of the end-to-end measurement.
var Goals = []Goal{
	{Mix: "95/5", Num: "b", Den: "a", Max: 1.05},
	{Mix: "genai", Num: "b", Den: "c", Max: 1.0},
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cell(runs []Sample, mix, pipeline string, f func(Sample) float64) []float64 {
	var v []float64
	for _, r := range runs {
		if r.Mix == mix && r.Pipeline == pipeline {
			v = append(v, f(r))
		}
	}
	return v
}

// pairedRatios is num/den CPU per span for each repetition that measured both.
func pairedRatios(runs []Sample, mix, num, den string) []float64 {
	byRep := map[int]map[string]float64{}
	for _, r := range runs {
		if r.Mix != mix {
			continue
		}
		if byRep[r.Rep] == nil {
			byRep[r.Rep] = map[string]float64{}
		}
		byRep[r.Rep][r.Pipeline] = r.CPUPerMillion()
	}
	var out []float64
	for _, m := range byRep {
		n, ok1 := m[num]
		d, ok2 := m[den]
		if ok1 && ok2 && d > 0 {
			out = append(out, n/d)
		}
	}
	return out
}

func spread(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3g–%.3g", slices.Min(v), slices.Max(v))
}

// Report prints the table: per mix and pipeline the median collector CPU
// seconds per million spans with its range, then the ratios.
func Report(w io.Writer, runs []Sample, pipelines []Pipeline, mixes []Mix) {
	cpu := func(r Sample) float64 { return r.CPUPerMillion() }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mix\tpipeline\tCPU s / 1M spans (median)\trange\tmax/min\truns\tspans/s held\tpeak RSS MiB\tsender CPU s / 1M")
	for _, m := range mixes {
		for _, p := range pipelines {
			v := cell(runs, m.Name, p.Name, cpu)
			if len(v) == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%.2f\t%d\t%.0f\t%.0f\t%.2f\n", m.Name, p.Name, median(v), spread(v),
				slices.Max(v)/slices.Min(v), len(v),
				median(cell(runs, m.Name, p.Name, func(r Sample) float64 { return r.AchievedRate })),
				median(cell(runs, m.Name, p.Name, func(r Sample) float64 { return r.PeakRSSMiB })),
				median(cell(runs, m.Name, p.Name, func(r Sample) float64 { return r.SenderCPU / float64(r.Spans) * 1e6 })))
		}
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mix\tratio\tmedian of paired ratios\trange\tratio of medians\tgoal")
	for _, m := range mixes {
		for _, pr := range [][2]string{{"b", "a"}, {"c", "a"}, {"b", "c"}, {"a2", "a"}, {"b0", "a"}, {"b", "b0"}, {"bp", "a"}, {"bk", "a"}, {"bd", "a"}, {"b", "bd"}, {"bs", "a"}, {"bs", "b"}, {"b2", "a2"}, {"b2", "b"}, {"b2", "c"}, {"f", "a"}, {"f", "a2"}, {"b", "f"}, {"b2", "f"}} {
			r := pairedRatios(runs, m.Name, pr[0], pr[1])
			if len(r) == 0 {
				continue
			}
			goal := ""
			for _, g := range Goals {
				if g.Mix == m.Name && g.Num == pr[0] && g.Den == pr[1] {
					verdict := "met"
					if median(r) > g.Max {
						verdict = "NOT met"
					}
					goal = fmt.Sprintf("≤ %.2f: %s", g.Max, verdict)
				}
			}
			ofMedians := median(cell(runs, m.Name, pr[0], cpu)) / median(cell(runs, m.Name, pr[1], cpu))
			fmt.Fprintf(tw, "%s\t%s/%s\t%.3f\t%s\t%.3f\t%s\n", m.Name, pr[0], pr[1], median(r), spread(r), ofMedians, goal)
		}
	}
	tw.Flush()

	var idle, load []float64
	for _, r := range runs {
		idle = append(idle, r.IdleCPUPerSec)
		load = append(load, r.LoadAvg[0], r.LoadAvg[1])
	}
	if len(runs) > 0 {
		fmt.Fprintf(w, "\nnoise: 1-minute load average %s during the runs; idle collector %.3f CPU s/s (median); "+
			"max/min above is the spread of each cell over its repetitions\n", spread(load), median(idle))
	}
	var legend []string
	for _, p := range pipelines {
		legend = append(legend, fmt.Sprintf("(%s) %s", p.Name, p.Description))
	}
	fmt.Fprintln(w, strings.Join(legend, "\n"))
}
