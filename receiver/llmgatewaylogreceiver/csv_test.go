package llmgatewaylogreceiver

import (
	"context"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	csvparser "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/parser/csv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

// stanzaCSV is stanza's csv_parser as the receiver used to run it: the
// header from headerAttribute, the row parsed into the body, a bad row
// passed on unparsed.
type stanzaCSV struct {
	parser *csvparser.Parser
	out    *captureOutput
}

func newStanzaCSV(t testing.TB, delim string) *stanzaCSV {
	t.Helper()
	set := componenttest.NewNopTelemetrySettings()
	c := csvparser.NewConfig()
	c.HeaderAttribute = headerAttribute
	c.FieldDelimiter = delim
	c.ParseTo = entry.RootableField{Field: entry.NewBodyField()}
	c.OnError = helper.SendOnErrorQuiet
	c.OutputIDs = []string{"capture"}
	op, err := c.Build(set)
	require.NoError(t, err)
	o, err := helper.NewOutputConfig("capture", "capture").Build(set)
	require.NoError(t, err)
	out := &captureOutput{OutputOperator: o}
	require.NoError(t, op.SetOutputs([]operator.Operator{out}))
	return &stanzaCSV{parser: op.(*csvparser.Parser), out: out}
}

// parse returns the object stanza makes of line, or ok false when it
// leaves the line unparsed.
func (s *stanzaCSV) parse(t testing.TB, header, line string) (map[string]any, bool) {
	t.Helper()
	s.out.got = s.out.got[:0]
	e := entry.New()
	e.Body = line
	e.Attributes = map[string]any{headerAttribute: header}
	require.NoError(t, s.parser.ProcessBatch(context.Background(), []*entry.Entry{e}))
	require.Len(t, s.out.got, 1)
	m, ok := s.out.got[0].Body.(map[string]any)
	return m, ok
}

// sameAsStanza checks that the mapping reads line as stanza's csv_parser
// does: the same fields under the same columns, or no row at all; and that
// every field of spec sp is the value field.get finds in stanza's object.
func sameAsStanza(t *testing.T, st *stanzaCSV, sp *spec, delim rune, header, line string) {
	t.Helper()
	want, parsed := st.parse(t, header, line)
	sep := ""
	if plainDelim(delim) {
		sep = string(delim)
	}
	cols := newCSVColumns(sp, header, delim)
	fields, err := splitCSVRow(line, delim, sep)
	read := err == nil && len(fields) == len(cols.names)
	require.Equal(t, parsed, read, "header %q line %q: stanza parsed %v, fields %q, err %v", header, line, parsed, fields, err)
	if !parsed {
		return
	}
	require.Equal(t, want, cols.object(fields), "header %q line %q", header, line)
	v := rowView{cols: cols, fields: fields}
	for _, f := range sp.fields() {
		wv, wn, wok := f.get(want)
		gv, gn, gok := v.get(f)
		require.Equal(t, wok, gok, "field %v", f.names)
		require.Equal(t, wn, gn, "field %v", f.names)
		require.Equal(t, wv, gv, "field %v", f.names)
		mv := rowView{row: want}
		require.Equal(t, mv.str(f), v.str(f), "field %v", f.names)
	}
}

func csvTestSpec(t testing.TB) *spec {
	t.Helper()
	// Dotted names read nested JSON text; route's first candidate is a
	// column a header may give twice.
	s, err := newSpec(FormatCSV, MappingConfig{
		TTFT: "ttft", StartTime: "start", Status: "status", Model: "model", Route: "r",
		PromptTokens: "usage.prompt_tokens", CachedTokens: "usage.details.cached", CompletionTokens: "a.b",
	})
	require.NoError(t, err)
	return s
}

func TestCSVRowsReadAsStanzaCSVParserReadsThem(t *testing.T) {
	sp := csvTestSpec(t)
	st := newStanzaCSV(t, ",")
	header := "ttft,start,status,model,r,usage,a.b,r"
	for _, line := range []string{
		`412.5,2026-11-30T00:00:01Z,ok,gpt,chat,"{""prompt_tokens"":12,""details"":{""cached"":3}}",7,second`,
		`1,2,ok,m,route,{},9,x`,
		`1,2,ok,m,route,x,9`,       // too few fields
		`1,2,ok,m,route,x,9,y,z`,   // too many
		`1,2,"ok",m, route ,x,9,y`, // quoted and spaced fields
		`1,2,o"k,m,route,x,9,y`,    // bare quote
		`1,2,"ok,m,route,x,9,y`,    // unterminated quote
		"1,2,ok,m,route,x,9,y\r",   // CR at the end
		"1,2,ok,m,ro\rute,x,9,y",   // CR inside
		"1,2,ok,m,\"a\nb\",x,9,y",  // quoted line break
		"1,2,ok,m,a\nb,x,9,y",      // line break: a continued last field
		"\n1,2,ok,m,route,x,9,y",   // leading empty line
		"", ",,,,,,,", " ", "\"\"", // empty, empty fields, blank
		"1,2,ok,m,route,x,9,y,",      // trailing delimiter
		"\uFEFF1,2,ok,m,route,x,9,y", // BOM on a data line
		"1,2,ok,m,r\xffoute,x,9,y",   // invalid UTF-8
	} {
		sameAsStanza(t, st, sp, ',', header, line)
	}
	// Another delimiter, and a header of one column.
	semi := newStanzaCSV(t, ";")
	sameAsStanza(t, semi, sp, ';', "ttft;status;model", `12;ok;"a;b"`)
	sameAsStanza(t, semi, sp, ';', "ttft;status;model", `12;ok;a,b`)
	sameAsStanza(t, st, sp, ',', "ttft", `12`)
	sameAsStanza(t, st, sp, ',', "ttft", `12,1`)
}

// FuzzCSVRowsReadAsStanzaCSVParserReadsThem holds the mapping's reading of a
// CSV row to stanza's csv_parser on arbitrary headers and lines.
func FuzzCSVRowsReadAsStanzaCSVParserReadsThem(f *testing.F) {
	f.Add(uint8(0), "ttft,start,status,model,r,usage,a.b,r", `412.5,2026-11-30T00:00:01Z,ok,gpt,chat,"{""prompt_tokens"":12}",7,second`)
	f.Add(uint8(1), "ttft;status", "\"1;2\";ok")
	f.Add(uint8(2), "ttft\tstatus\tusage", "1\tok\t{\"prompt_tokens\":3}")
	f.Add(uint8(0), "ttft,status", "1,\"o\nk\"")
	delims := []string{",", ";", "\t", "|"}
	sp := csvTestSpec(f)
	parsers := map[string]*stanzaCSV{}
	f.Fuzz(func(t *testing.T, which uint8, header, line string) {
		delim := delims[int(which)%len(delims)]
		st, ok := parsers[delim]
		if !ok {
			st = newStanzaCSV(t, delim)
			parsers[delim] = st
		}
		sameAsStanza(t, st, sp, []rune(delim)[0], header, line)
	})
}

func TestCSVHeadersAreRemembered(t *testing.T) {
	sp := csvTestSpec(t)
	h := &csvHeaders{spec: sp, delim: ','}
	a := h.columns("ttft,status")
	assert.Same(t, a, h.columns("ttft,status"))
	b := h.columns("status,ttft")
	assert.Equal(t, 1, b.fields[sp.ttft.id][0].exact)
	assert.Same(t, a, h.columns("ttft,status"), "an earlier header is still known")
	for i := range 2 * maxCachedHeaders {
		h.columns(strings.Repeat("x,", i) + "ttft")
	}
	assert.LessOrEqual(t, len(h.seen), maxCachedHeaders)
	assert.Equal(t, 0, h.columns("ttft,status").fields[sp.ttft.id][0].exact)
}
