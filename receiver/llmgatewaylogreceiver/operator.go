package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	csvparser "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/parser/csv"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/parser/jsonparser"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-ttft/otelcol-ttft/internal/band"
)

// headerAttribute carries each CSV file's header line from the file input's
// header reader (kept in the checkpoint, so a resumed file still knows it)
// to the csv_parser's header_attribute.
const headerAttribute = "llm_gateway_log.csv_header"

// headerTooLongAttribute marks a file whose header line is longer than
// maxHeaderBytes: its rows are skipped as header_too_long. The csv_parser
// splits the header again for every row, so a huge header would cost its
// length on every row of the file.
const headerTooLongAttribute = "llm_gateway_log.csv_header_too_long"

// maxHeaderBytes is far beyond any real export's header (hundreds of columns).
const maxHeaderBytes = 16 << 10

const (
	headerOperatorType = "llm_gateway_log_header"
	mapOperatorType    = "llm_gateway_log_map"
)

// headerPattern matches a CSV line that names the ttft column as one of its
// fields (exact case, as the mapping looks columns up): the header. Data
// rows hold numbers there, so the header reader stops at the first data row.
func headerPattern(delim string, names []string) string {
	d := regexp.QuoteMeta(delim)
	alts := make([]string, len(names))
	for i, n := range names {
		alts[i] = regexp.QuoteMeta(n)
	}
	return fmt.Sprintf(`(^\x{FEFF}?|%s)\s*"?(%s)"?\s*(%s|$)`, d, strings.Join(alts, "|"), d)
}

// headerColumns returns the names a header line must contain one of.
func headerColumns(s *spec) []string {
	if s.ttft.set() {
		return s.ttft.names
	}
	return s.firstToken.names
}

// operators builds the stanza pipeline after the file input: parser, then
// the mapping into request records.
func operators(c *Config) ([]operator.Config, error) {
	s, err := newSpec(c.Format, c.Mapping)
	if err != nil {
		return nil, err
	}
	var ops []operator.Config
	if s.csv {
		p := csvparser.NewConfigWithID("llm_gateway_log_csv")
		p.HeaderAttribute = headerAttribute
		p.FieldDelimiter = c.Delimiter
		p.ParseTo = entry.RootableField{Field: entry.NewBodyField()}
		// A file without a header line cannot be parsed; let the mapping count it.
		p.IfExpr = fmt.Sprintf(`attributes[%q] != nil`, headerAttribute)
		p.OnError = helper.SendOnErrorQuiet // the mapping counts and logs bad rows
		ops = append(ops, operator.NewConfig(p))
	} else {
		p := jsonparser.NewConfigWithID("llm_gateway_log_json")
		p.ParseTo = entry.RootableField{Field: entry.NewBodyField()}
		p.OnError = helper.SendOnErrorQuiet
		ops = append(ops, operator.NewConfig(p))
	}
	ops = append(ops, operator.NewConfig(&mapConfig{
		TransformerConfig: helper.NewTransformerConfig(mapOperatorType, mapOperatorType),
		spec:              s,
		bounds:            c.Derive.PromptBands,
		maxTTFT:           c.Derive.MaxTTFTSeconds,
		keepRow:           c.KeepRow,
		delimiter:         c.Delimiter,
		keepRecordNumber:  c.InputConfig.IncludeFileRecordNumber,
	}))
	return ops, nil
}

// headerConfig builds the header reader's operator: it stores the header's
// column names, unquoted, in headerAttribute.
type headerConfig struct {
	helper.TransformerConfig
	delimiter string
}

func (c *headerConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	d, _ := utf8.DecodeRuneInString(c.delimiter)
	return &headerOperator{TransformerOperator: t, delimiter: d}, nil
}

type headerOperator struct {
	helper.TransformerOperator
	delimiter rune
}

func (h *headerOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	var errs []error
	for _, e := range entries {
		errs = append(errs, h.Process(ctx, e))
	}
	return errors.Join(errs...)
}

func (h *headerOperator) Process(ctx context.Context, e *entry.Entry) error {
	h.parseInto(e)
	return h.Write(ctx, e)
}

// parseInto stores the header line's column names in headerAttribute.
func (h *headerOperator) parseInto(e *entry.Entry) {
	line, _ := e.Body.(string)
	line = strings.TrimPrefix(line, "\uFEFF")
	if len(line) > maxHeaderBytes {
		e.AddAttribute(headerTooLongAttribute, "true")
		return
	}
	names := []string{line}
	r := csv.NewReader(strings.NewReader(line))
	r.Comma = h.delimiter
	r.LazyQuotes = true
	if rec, err := r.Read(); err == nil {
		names = rec
	}
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	e.AddAttribute(headerAttribute, strings.Join(names, string(h.delimiter)))
}

// mapConfig builds the mapping operator; it is not user-configurable as an
// operator, the receiver config is its surface.
type mapConfig struct {
	helper.TransformerConfig
	spec      *spec
	bounds    []int64
	maxTTFT   float64
	keepRow   bool
	delimiter string
	// keepRecordNumber is the user's include_file_record_number; the
	// receiver turns it on for its own skipped-row logs either way.
	keepRecordNumber bool
}

func (c *mapConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	bands, err := band.New(c.bounds)
	if err != nil {
		return nil, fmt.Errorf("derive::prompt_bands: %w", err)
	}
	tel, err := newTelemetry(set, c.spec.format)
	if err != nil {
		return nil, err
	}
	d, _ := utf8.DecodeRuneInString(c.delimiter)
	headerLines := int64(0)
	if c.spec.csv {
		headerLines = 1
	}
	return &mapOperator{
		TransformerOperator: t,
		mapper:              mapper{spec: c.spec, bands: bands, maxTTFT: c.maxTTFT, source: "llm_gateway_log/" + c.spec.format + ":"},
		tel:                 tel,
		// Bounded: the first 10 skipped rows per minute are logged, the rest only counted.
		skipLog: set.Logger.WithOptions(zap.WrapCore(func(core zapcore.Core) zapcore.Core {
			return zapcore.NewSamplerWithOptions(core, time.Minute, 10, 0)
		})),
		keepRow:          c.keepRow,
		delimiter:        d,
		headerLines:      headerLines,
		keepRecordNumber: c.keepRecordNumber,
	}, nil
}

type mapOperator struct {
	helper.TransformerOperator
	mapper           mapper
	tel              *telemetry
	skipLog          *zap.Logger
	keepRow          bool
	delimiter        rune
	headerLines      int64
	keepRecordNumber bool
}

func (o *mapOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	kept := make([]*entry.Entry, 0, len(entries))
	for _, e := range entries {
		if o.mapEntry(ctx, e) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	o.tel.mapped(ctx, int64(len(kept)))
	return o.WriteBatch(ctx, kept)
}

func (o *mapOperator) Process(ctx context.Context, e *entry.Entry) error {
	if !o.mapEntry(ctx, e) {
		return nil
	}
	o.tel.mapped(ctx, 1)
	return o.Write(ctx, e)
}

// mapEntry rewrites e into a request record, or counts and logs why not.
func (o *mapOperator) mapEntry(ctx context.Context, e *entry.Entry) bool {
	row, ok := e.Body.(map[string]any)
	var reason string
	var m mapped
	if !ok {
		reason = o.unparsedReason(e)
	} else {
		m, reason = o.mapper.mapRow(row)
	}
	if reason != "" {
		o.tel.skipped(ctx, reason)
		if ce := o.skipLog.Check(zapcore.WarnLevel, "skipped gateway row"); ce != nil {
			ce.Write(zap.String("reason", reason), zap.String("file", fileOf(e)), zap.Int64("line", o.lineOf(e)))
		}
		return false
	}
	// Keep what the file input and the user set (log.file.*, attributes:),
	// not the receiver's own plumbing.
	out := pcommon.NewMap()
	out.EnsureCapacity(len(e.Attributes) + 18)
	for k, v := range e.Attributes {
		if k == headerAttribute || k == headerTooLongAttribute || (k == attrs.LogFileRecordNumber && !o.keepRecordNumber) {
			continue
		}
		_ = out.PutEmpty(k).FromRaw(v)
	}
	m.rec.Write(out)
	e.Attributes = out.AsRaw()
	if m.hasTime {
		e.Timestamp = m.at
	} else {
		e.Timestamp = e.ObservedTimestamp
	}
	if !o.keepRow {
		e.Body = nil
	}
	return true
}

// unparsedReason tells why the parser left the row as text.
func (o *mapOperator) unparsedReason(e *entry.Entry) string {
	line, _ := e.Body.(string)
	if b, ok := e.Body.([]byte); ok {
		line = string(b)
	}
	if !o.mapper.spec.csv {
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			return reasonNotObject
		}
		return reasonMalformedJSON
	}
	if _, ok := e.Attributes[headerTooLongAttribute]; ok {
		return reasonHeaderTooLong
	}
	if _, ok := e.Attributes[headerAttribute]; !ok {
		return reasonMissingHeader
	}
	r := csv.NewReader(strings.NewReader(line))
	r.Comma = o.delimiter
	r.FieldsPerRecord = -1
	if _, err := r.Read(); err != nil {
		return reasonMalformedCSV
	}
	return reasonColumnCount
}

func fileOf(e *entry.Entry) string {
	if p, ok := e.Attributes[attrs.LogFilePath].(string); ok {
		return p
	}
	if n, ok := e.Attributes[attrs.LogFileName].(string); ok {
		return n
	}
	return ""
}

// lineOf is the 1-based line of the row in its file: the record number plus
// the header line.
func (o *mapOperator) lineOf(e *entry.Entry) int64 {
	if n, ok := e.Attributes[attrs.LogFileRecordNumber].(int64); ok {
		return n + o.headerLines
	}
	return 0
}
