package genaittftconnector

import (
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// A cut value is a copy: the series that keep it must not keep the whole
// value (a 1 MiB model name, cut to 256 bytes, would otherwise stay alive in
// full in each of them). A value that fits is not copied.
func TestClipValueKeepsNothingOfTheLongValue(t *testing.T) {
	long := strings.Repeat("m", 1<<20)
	v := clipValue(long)
	assert.Len(t, v, maxDimValueLen)
	assert.NotSame(t, unsafe.StringData(long), unsafe.StringData(v))

	short := strings.Repeat("m", maxDimValueLen)
	assert.Same(t, unsafe.StringData(short), unsafe.StringData(clipValue(short)))
}

// A label value is valid UTF-8 whatever bytes a span sent: one run of
// invalid bytes becomes U+FFFD, so a value of nothing but invalid bytes
// still names a series of its own instead of the one without the label.
func TestClipValueIsValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"gpt-4.1":                       "gpt-4.1",
		"gpt\xff-4.1":                   "gpt\uFFFD-4.1",
		strings.Repeat("\x80", 300):     "\uFFFD",
		"ok" + strings.Repeat("é", 200): "ok" + strings.Repeat("é", 127), // 256 bytes: the cut never splits a rune
	} {
		assert.Equal(t, want, clipValue(in), "%q", in)
	}
	long := strings.Repeat("\xff.", 1<<19) // 1 MiB, every other byte invalid
	v := clipValue(long)
	assert.True(t, utf8.ValidString(v))
	assert.LessOrEqual(t, len(v), maxDimValueLen)
	assert.Equal(t, strings.Repeat("\uFFFD.", maxDimValueLen/4), v)
}

func FuzzClipValue(f *testing.F) {
	for _, s := range []string{"", "gpt-4.1", "a\xffb", strings.Repeat("\x80", 300), strings.Repeat("é", 200) + "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := clipValue(s)
		if !utf8.ValidString(v) || len(v) > maxDimValueLen {
			t.Fatalf("clipValue(%q) = %q: not valid UTF-8 or longer than %d", s, v, maxDimValueLen)
		}
		if utf8.ValidString(s) && !strings.HasPrefix(s, v) {
			t.Fatalf("clipValue(%q) = %q: a valid value is only cut", s, v)
		}
		if utf8.ValidString(s) && len(s) <= maxDimValueLen && v != s {
			t.Fatalf("clipValue(%q) = %q: a valid short value is kept", s, v)
		}
		// dimValues tests the usual value itself: it must agree.
		vals := make([]string, 1)
		res := newResourceDims(1)
		res.use(pcommon.NewMap())
		dimValues([]dimension{{name: record.KeyModel, field: fieldModel}}, &record.Record{Model: s}, pcommon.NewMap(), res, vals)
		if vals[0] != v {
			t.Fatalf("dimValues gave %q for %q, clipValue %q", vals[0], s, v)
		}
	})
}

// isASCII finds a byte past ASCII at every length and position (the word
// reads overlap at the end).
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for i := -1; i < n; i++ {
			for _, c := range []byte{0x80, 0xc3, 0xff} {
				b := []byte(strings.Repeat("m", n))
				if i >= 0 {
					b[i] = c
				}
				assert.Equal(t, i < 0, isASCII(string(b)), "%q", b)
			}
		}
	}
}
