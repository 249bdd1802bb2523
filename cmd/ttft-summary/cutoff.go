package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// RouteCutoff is the gateway cutoff recommended for one route (for Bifrost,
// one routing rule and its ttft_timeout_ms).
type RouteCutoff struct {
	Route   string
	Seconds float64
	OK      bool
	From    *Row   // the primary row that sets it: the slowest of the route's primaries
	Note    string // why there is none
}

// Millis is the cutoff in whole milliseconds.
func (c RouteCutoff) Millis() int64 { return int64(math.Round(c.Seconds * 1000)) }

// Cutoffs picks, per route, the largest recommendation of the policy over
// the route's primary attempts: one cutoff guards every target the route
// sends to, so it must fit the slowest. Fallback attempts (another provider
// or model, tried after the primary failed) never size the primary's cutoff.
func Cutoffs(s *Summary, policy string) []RouteCutoff {
	byRoute := map[string]*RouteCutoff{}
	var routes []string
	fallbackOnly := map[string]*Row{}
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Route == "" {
			continue
		}
		rc, ok := byRoute[r.Route]
		if !ok {
			rc = &RouteCutoff{Route: r.Route}
			byRoute[r.Route] = rc
			routes = append(routes, r.Route)
		}
		v, has := r.Clock.Recommended[policy]
		// A cutoff in whole milliseconds, positive and within a day: a
		// value past that (or not finite) from some other source is no
		// routing rule's ttft_timeout_ms.
		has = has && v >= 0.001 && v <= 86400
		if r.FailedOver {
			if has {
				fallbackOnly[r.Route] = r
			}
			continue
		}
		if has && (!rc.OK || v > rc.Seconds) {
			rc.Seconds, rc.OK, rc.From = v, true, r
		}
	}
	sort.Strings(routes)
	out := make([]RouteCutoff, 0, len(routes))
	for _, route := range routes {
		rc := byRoute[route]
		if !rc.OK {
			if fb, ok := fallbackOnly[route]; ok {
				rc.Note = fmt.Sprintf("only fallback attempts observed (%s/%s): no primary TTFT to size it from", fb.Provider, fb.Model)
			} else {
				rc.Note = "no " + policy + " recommendation yet (below the minimum volume, or a clock the policy does not accept)"
			}
		}
		out = append(out, *rc)
	}
	return out
}

// renderCutoffs prints one line per route: the recommended cutoff in ms and
// where it comes from.
func renderCutoffs(w io.Writer, cs []RouteCutoff, policy string) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nGateway cutoff per route (policy %s; for Bifrost: a routing rule's ttft_timeout_ms, in versions that have it)\n", policy)
	table := [][]string{{"ROUTE", "TTFT_TIMEOUT_MS", "FROM"}}
	for _, c := range cs {
		ms, from := "-", c.Note
		if c.OK {
			ms = strconv.FormatInt(c.Millis(), 10)
			r := c.From
			target := orDash(r.Provider) + "/" + orDash(r.Model)
			if r.Dims != "" {
				target += " (" + r.Dims + ")"
			}
			from = fmt.Sprintf("%s %s p99 %s over %s requests", target, clockName(r.MeasuredAt),
				quantileCell(r.Clock, "0.99"), samples(r.Clock))
		}
		table = append(table, []string{c.Route, ms, from})
	}
	writeCutoffTable(w, table)
}

// writeCutoffTable aligns: route left, milliseconds right, the note as is.
func writeCutoffTable(w io.Writer, table [][]string) {
	var w0, w1 int
	for _, row := range table {
		w0, w1 = max(w0, len(row[0])), max(w1, len(row[1]))
	}
	for _, row := range table {
		fmt.Fprintf(w, "%-*s  %*s  %s\n", w0, row[0], w1, row[1], row[2])
	}
}

// renderCutoffJSON prints, per route with a recommendation, the JSON body
// of a Bifrost routing-rule update, for a human to review and apply. This
// tool never calls a gateway.
func renderCutoffJSON(w io.Writer, cs []RouteCutoff) {
	for _, c := range cs {
		if !c.OK {
			continue
		}
		fmt.Fprintf(w, "# routing rule %s\n{\"ttft_timeout_ms\": %d}\n", c.Route, c.Millis())
	}
}
