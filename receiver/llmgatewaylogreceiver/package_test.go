package llmgatewaylogreceiver

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The stanza emitter and file consumer stop their goroutines on Shutdown;
	// the OpenCensus-free collector leaves nothing else running.
	goleak.VerifyTestMain(m)
}
