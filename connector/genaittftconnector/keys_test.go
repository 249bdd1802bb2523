package genaittftconnector

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
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
