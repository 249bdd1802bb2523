package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Attributes the connector sets on data points (beyond the record's ttft.* keys).
const (
	attrFailedOver          = "ttft.failed_over"
	attrFirstContentSeen    = "ttft.first_content_seen"
	attrQuantile            = "quantile"
	attrPolicy              = "ttft.policy"
	attrCensored            = "ttft.censored"
	attrCollectorInstanceID = "collector.instance.id"
	// attrOverflow is the OpenTelemetry SDK's overflow marker, as in spanmetrics.
	attrOverflow = "otel.metric.overflow"
)

// dimension is one configured dimension and where its value comes from.
type dimension struct {
	name string
	// fromRecord reads the record's normalised value first (provider, model
	// and route are normalised from producer-specific keys by derivation).
	fromRecord func(*record.Record) string
}

func newDimensions(names []string) []dimension {
	dims := make([]dimension, len(names))
	for i, n := range names {
		dims[i].name = n
		switch n {
		case record.KeyProvider:
			dims[i].fromRecord = func(r *record.Record) string { return r.Provider }
		case record.KeyModel:
			dims[i].fromRecord = func(r *record.Record) string { return r.Model }
		case record.KeyRoute:
			dims[i].fromRecord = func(r *record.Record) string { return r.Route }
		}
	}
	return dims
}

// dimValues resolves every dimension for one record into vals: the record,
// then the span or log attributes, then the resource attributes. A missing
// or empty value is "" and its attribute is omitted from the series.
func dimValues(dims []dimension, rec *record.Record, attrs, resAttrs pcommon.Map, vals []string) {
	for i, d := range dims {
		v := ""
		if d.fromRecord != nil {
			v = d.fromRecord(rec)
		}
		if v == "" {
			v = attrString(attrs, d.name)
		}
		if v == "" {
			v = attrString(resAttrs, d.name)
		}
		vals[i] = v
	}
}

func attrString(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}

// keyBuilder builds unambiguous series keys (length-prefixed fields) in a
// reused buffer, so a lookup of an existing series allocates nothing.
type keyBuilder struct{ buf []byte }

func (k *keyBuilder) reset() { k.buf = k.buf[:0] }

func (k *keyBuilder) str(s string) {
	k.buf = binary.AppendUvarint(k.buf, uint64(len(s)))
	k.buf = append(k.buf, s...)
}

func (k *keyBuilder) flag(b bool) {
	if b {
		k.buf = append(k.buf, 1)
	} else {
		k.buf = append(k.buf, 0)
	}
}

func (k *keyBuilder) strs(ss []string) {
	for _, s := range ss {
		k.str(s)
	}
}

// putDims writes the non-empty dimension values into attrs.
func putDims(attrs pcommon.Map, dims []dimension, vals []string) {
	for i, d := range dims {
		if vals[i] != "" {
			attrs.PutStr(d.name, vals[i])
		}
	}
}

func putNonEmpty(attrs pcommon.Map, key, v string) {
	if v != "" {
		attrs.PutStr(key, v)
	}
}
