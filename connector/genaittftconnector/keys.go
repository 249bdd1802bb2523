package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"unicode/utf8"
	"unsafe"

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
	// field is the record's normalised value it reads first (provider,
	// model and route are normalised from producer-specific keys by
	// derivation), or fieldNone.
	field recordField
}

type recordField uint8

const (
	fieldNone recordField = iota
	fieldProvider
	fieldModel
	fieldRoute
)

func newDimensions(names []string) []dimension {
	dims := make([]dimension, len(names))
	for i, n := range names {
		dims[i].name = n
		switch n {
		case record.KeyProvider:
			dims[i].field = fieldProvider
		case record.KeyModel:
			dims[i].field = fieldModel
		case record.KeyRoute:
			dims[i].field = fieldRoute
		}
	}
	return dims
}

// dimValues resolves every dimension for one record into vals: the record,
// then the span or log attributes, then the resource attributes. A missing
// or empty value is "" and its attribute is omitted from the series. Values
// longer than maxDimValueLen are cut there.
func dimValues(dims []dimension, rec *record.Record, attrs pcommon.Map, res *resourceDims, vals []string) {
	for i := range dims {
		d := &dims[i]
		var v string
		switch d.field {
		case fieldProvider:
			v = rec.Provider
		case fieldModel:
			v = rec.Model
		case fieldRoute:
			v = rec.Route
		}
		if v == "" {
			v = attrString(attrs, d.name)
		}
		if v == "" {
			v = res.value(i, d.name)
		}
		// clipValue's usual case written out, as a call a dimension costs
		// more than the test: empty, or 4 to 16 bytes of ASCII (two
		// overlapping reads).
		if n := len(v); n == 0 {
			vals[i] = ""
			continue
		} else if n >= 4 && n <= 16 {
			b := unsafe.Slice(unsafe.StringData(v), n)
			var or uint64
			if n >= 8 {
				or = binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[n-8:])
			} else {
				or = uint64(binary.LittleEndian.Uint32(b) | binary.LittleEndian.Uint32(b[n-4:]))
			}
			if or&0x8080808080808080 == 0 {
				vals[i] = v
				continue
			}
		}
		vals[i] = clipValue(v)
	}
}

// maxDimValueLen bounds a dimension value (bytes): each series keeps its
// values, so one huge model name sent 5,000 times would otherwise hold
// 5,000 copies of it until the series expire.
const maxDimValueLen = 256

// clipValue makes v a label value: valid UTF-8 (each run of invalid bytes
// becomes U+FFFD) of at most maxDimValueLen bytes, cut at a rune boundary.
// Label values must be UTF-8: the Prometheus exporter drops a series
// whose label is not, with an error at every scrape (client_golang's
// label check), and other backends may refuse a whole request for one;
// a span's bytes must not reach one. What it cuts or mends is a copy: a
// piece of v would keep all of v alive in every series, key and window
// that holds the value. dimValues tests the usual value itself.
func clipValue(v string) string {
	if len(v) <= maxDimValueLen && (isASCII(v) || utf8.ValidString(v)) {
		return v // no copy
	}
	if p := v[:min(len(v), 4*maxDimValueLen)]; !utf8.ValidString(p) {
		// Mended from a bounded prefix: past 4 × the limit no byte can
		// reach the cut value (each run of invalid bytes becomes 3 bytes).
		v = strings.ToValidUTF8(p, "\uFFFD")
		if len(v) <= maxDimValueLen {
			return v
		}
	}
	n := maxDimValueLen
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return strings.Clone(v[:n])
}

// isASCII reports whether v (at most maxDimValueLen bytes) is ASCII, a
// word at a time with the last word overlapping: ~15 instructions for a
// 10-byte model name, where utf8.ValidString reads one that short mostly
// byte by byte (~130).
func isASCII(v string) bool {
	b := unsafe.Slice(unsafe.StringData(v), len(v))
	switch n := len(b); {
	case n >= 8:
		or := binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[n-8:])
		for i := 8; i < n-8; i += 8 {
			or |= binary.LittleEndian.Uint64(b[i:])
		}
		return or&0x8080808080808080 == 0
	case n >= 4:
		return (binary.LittleEndian.Uint32(b)|binary.LittleEndian.Uint32(b[n-4:]))&0x80808080 == 0
	case n > 0:
		return (b[0]|b[n/2]|b[n-1])&0x80 == 0 // n ≤ 3: every byte
	}
	return true
}

// resourceDims holds the resource-level value of each dimension for the
// resource in hand. A resource carries many spans; looking its attributes
// up again for every record would cost the resource's size per record.
type resourceDims struct {
	attrs pcommon.Map
	set   bool
	vals  []string
	known []bool
}

func newResourceDims(n int) *resourceDims {
	return &resourceDims{vals: make([]string, n), known: make([]bool, n)}
}

// use makes attrs the resource in hand.
func (r *resourceDims) use(attrs pcommon.Map) {
	if r.set && r.attrs == attrs {
		return
	}
	r.attrs, r.set = attrs, true
	clear(r.known)
}

func (r *resourceDims) value(i int, name string) string {
	if !r.known[i] {
		r.vals[i], r.known[i] = attrString(r.attrs, name), true
	}
	return r.vals[i]
}

// forget drops the batch's resource at the end of a batch: nothing of it is
// kept alive, and a later resource at the same address is not mistaken for it.
func (r *resourceDims) forget() {
	r.attrs, r.set = pcommon.Map{}, false
	clear(r.vals)
	clear(r.known)
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
	if len(s) < 0x80 {
		// The one-byte uvarint, without the call: most values are short.
		k.buf = append(append(k.buf, byte(len(s))), s...)
		return
	}
	k.buf = binary.AppendUvarint(k.buf, uint64(len(s)))
	k.buf = append(k.buf, s...)
}

// maxKeyLen bounds a key a series keeps (bytes).
const maxKeyLen = 512

// bound replaces a key longer than maxKeyLen with a 0xff byte and its
// SHA-256: a source series' key holds every label of its point, and a
// series limit alone would not bound memory against huge labels. A kept
// key is never 33 bytes with a first byte of 0xff (that is a name of 128
// bytes or more, in a key of 130 or more), so a digest meets no kept key,
// and two digests meet only where SHA-256 collides.
func (k *keyBuilder) bound() {
	if len(k.buf) <= maxKeyLen {
		return
	}
	sum := sha256.Sum256(k.buf)
	k.buf = append(append(k.buf[:0], 0xff), sum[:]...)
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
