package llmgatewaylogreceiver

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHeaderPatternRecognisesOnlyTheHeaderLine(t *testing.T) {
	comma := regexp.MustCompile(headerPattern(",", []string{"ttft_ms"}))
	tab := regexp.MustCompile(headerPattern("\t", []string{"first_token_seconds"}))
	for _, tc := range []struct {
		name   string
		re     *regexp.Regexp
		line   string
		header bool
	}{
		{"column in the middle", comma, "request_id,created_at,ttft_ms,status", true},
		{"first column", comma, "ttft_ms,status", true},
		{"last column", comma, "status,ttft_ms", true},
		{"quoted names", comma, `"request_id","ttft_ms","status"`, true},
		{"byte order mark", comma, "\uFEFFttft_ms,status", true},
		{"spaces around names", comma, "status , ttft_ms ,model", true},
		{"a data row", comma, "req-1,2026-11-30T00:00:01.120Z,412.5,ok", false},
		{"a longer column name", comma, "status,ttft_ms_p99", false},
		{"another case", comma, "status,TTFT_MS", false},
		{"tab-separated header", tab, "started\tfirst_token_seconds\tmodel", true},
		{"tab-separated data", tab, "2026-11-30 10:00:00\t0.84\tgpt", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.header, tc.re.MatchString(tc.line))
		})
	}
}
