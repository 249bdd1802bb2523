// Package promfixture grows a real Prometheus exposition deterministically,
// so tests can serve a "second scrape" of a gateway whose TTFT histograms
// kept counting: the captured Bifrost exposition, then the same series with
// more samples. Test support only; the collector does not use it.
package promfixture // import "github.com/otelcol-ttft/otelcol-ttft/internal/promfixture"

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// BifrostTTFT is Bifrost's first-token histogram.
const BifrostTTFT = "bifrost_stream_first_token_latency_seconds"

// Parse reads a text exposition.
func Parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// Write renders families as a text exposition, in name order.
func Write(w io.Writer, fams map[string]*dto.MetricFamily) error {
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(w, fams[n]); err != nil {
			return err
		}
	}
	return nil
}

// Grow returns the exposition with `extra` more samples in every series of
// the histogram `name`: lognormal around the series' own mean (σ = sigma),
// seeded from the series' labels, so the result is the same on every run.
// Everything else is copied unchanged.
func Grow(exposition []byte, name string, extra int, sigma float64) ([]byte, error) {
	fams, err := Parse(bytes.NewReader(exposition))
	if err != nil {
		return nil, err
	}
	f, ok := fams[name]
	if !ok || f.GetType() != dto.MetricType_HISTOGRAM {
		return nil, fmt.Errorf("no histogram %s in the exposition", name)
	}
	f = proto.Clone(f).(*dto.MetricFamily)
	fams[name] = f
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		mean := h.GetSampleSum() / math.Max(float64(h.GetSampleCount()), 1)
		if mean <= 0 {
			mean = 0.3
		}
		r := rand.New(rand.NewPCG(seed(m), 0x5eed))
		// A lognormal with this mean: median = mean·e^(−σ²/2).
		median := mean * math.Exp(-sigma*sigma/2)
		bs := h.GetBucket()
		for i := 0; i < extra; i++ {
			v := math.Round(median*math.Exp(sigma*r.NormFloat64())*1000) / 1000 // whole ms, as Bifrost records
			for _, b := range bs {
				if v <= b.GetUpperBound() {
					b.CumulativeCount = proto.Uint64(b.GetCumulativeCount() + 1)
				}
			}
			h.SampleSum = proto.Float64(h.GetSampleSum() + v)
			h.SampleCount = proto.Uint64(h.GetSampleCount() + 1)
		}
	}
	var out bytes.Buffer
	if err := Write(&out, fams); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func seed(m *dto.Metric) uint64 {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(pairs)
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.Join(pairs, ",")))
	return h.Sum64()
}
