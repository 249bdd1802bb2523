// Package recordtest reads request records back in tests.
package recordtest // import "github.com/otelcol-ttft/otelcol-ttft/internal/record/recordtest"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Read parses a stamped record back from attrs; ok is false when they carry
// none or an unusable one.
func Read(attrs pcommon.Map) (r record.Record, ok bool) {
	state, _ := record.Inspect(attrs, &r)
	return r, state == record.StateStamped
}

// Stamped reports whether attrs carry a request record.
func Stamped(attrs pcommon.Map) bool {
	_, ok := attrs.Get(record.KeyOutcome)
	return ok
}

// Nested reports whether attrs mark a span folded into another's record.
func Nested(attrs pcommon.Map) bool {
	_, ok := attrs.Get(record.KeyNestedIn)
	return ok
}
