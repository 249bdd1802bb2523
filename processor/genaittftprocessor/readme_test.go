package genaittftprocessor

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// The README's producer table is the code's table: this renders the
// built-in producers and rows and compares them with the README between
// its markers. Regenerate with: go test -run TestREADMEProducerTable -update
func TestREADMEProducerTable(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	const begin, end = "<!-- producer-table:begin -->\n", "<!-- producer-table:end -->"
	readme := string(raw)
	i, j := strings.Index(readme, begin), strings.Index(readme, end)
	require.True(t, i >= 0 && j > i, "README.md has no producer table markers")
	want := renderProducerTable()
	if *update {
		readme = readme[:i+len(begin)] + want + readme[j:]
		require.NoError(t, os.WriteFile("README.md", []byte(readme), 0o600))
		return
	}
	assert.Equal(t, want, readme[i+len(begin):j], "README.md's producer table differs from derive.DefaultRows(); run with -update")
}

func renderProducerTable() string {
	var b strings.Builder
	b.WriteString("| producer | matched by |\n|---|---|\n")
	for _, p := range derive.DefaultProducers() {
		var by []string
		for _, s := range p.ScopeNames {
			by = append(by, fmt.Sprintf("scope `%s`", s))
		}
		for _, s := range p.ScopePrefixes {
			by = append(by, fmt.Sprintf("scope `%s*`", s))
		}
		for _, s := range p.ScopeContains {
			by = append(by, fmt.Sprintf("scope containing `%s`", s))
		}
		for _, s := range p.ServiceNames {
			by = append(by, fmt.Sprintf("`service.name` / `telemetry.sdk.name` containing `%s`", s))
		}
		var notes []string
		if p.Gateway {
			notes = append(notes, "gateway")
		}
		if p.CacheExcluded {
			notes = append(notes, "input tokens exclude cached input")
		}
		if p.DurationIsNoTTFT {
			notes = append(notes, "a TTFT equal to the duration is none, streamed or not")
		}
		name := "`" + p.Name + "`"
		if len(notes) > 0 {
			name += " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", name, strings.Join(by, ", "))
	}
	b.WriteString("\n| producer | attribute or event | meaning | unit | rank | source |\n|---|---|---|---|---|---|\n")
	for _, r := range derive.DefaultRows() {
		producer := "any"
		if r.Producer != "" {
			producer = "`" + r.Producer + "`"
		}
		key := "`" + r.Key + "`"
		if r.Event {
			key = "event " + key
		}
		unit := r.Unit
		if unit == "" {
			unit = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %d | %s |\n", producer, key, r.Meaning, unit, r.Rank, r.Source)
	}
	return b.String()
}
