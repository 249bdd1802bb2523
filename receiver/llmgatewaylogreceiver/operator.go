package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/parser/jsonparser"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-ttft/otelcol-ttft/internal/derive"
)

// headerAttribute carries each CSV file's header line from the file input's
// header reader (kept in the checkpoint, so a resumed file still knows it)
// to the mapping, which reads each row under it (csv.go).
const headerAttribute = "llm_gateway_log.csv_header"

// headerTooLongAttribute marks a file whose header line is longer than
// maxHeaderBytes: its rows are skipped as header_too_long. No real export's
// header comes close; the bound keeps what the receiver holds per file (the
// header in the checkpoint, its columns in csvHeaders) small.
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
	// First: drop rows passed on before a crash (resume.go).
	ops := []operator.Config{operator.NewConfig(&resumeConfig{
		TransformerConfig: helper.NewTransformerConfig(resumeOperatorType, resumeOperatorType),
		format:            c.Format,
		fingerprintSize:   int(c.InputConfig.FingerprintSize),
	})}
	// CSV rows are read by the mapping itself (csv.go); JSON lines are
	// parsed first.
	if !s.csv {
		p := jsonparser.NewConfigWithID("llm_gateway_log_json")
		p.ParseTo = entry.RootableField{Field: entry.NewBodyField()}
		p.OnError = helper.SendOnErrorQuiet
		ops = append(ops, operator.NewConfig(p))
	}
	clock := c.clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	ops = append(ops, operator.NewConfig(&mapConfig{
		TransformerConfig: helper.NewTransformerConfig(mapOperatorType, mapOperatorType),
		spec:              s,
		derive:            c.Derive,
		fallbacks:         c.Fallbacks,
		clock:             clock,
		keepRow:           c.KeepRow,
		delimiter:         c.Delimiter,
		keepRecordNumber:  c.InputConfig.IncludeFileRecordNumber,
		keepPath:          c.InputConfig.IncludeFilePath,
		saveHeld:          c.StorageID != nil,
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
	derive    derive.Config
	fallbacks FallbacksConfig
	clock     clockwork.Clock
	keepRow   bool
	delimiter string
	// keepRecordNumber is the user's include_file_record_number; the
	// receiver turns it on for its own skipped-row logs either way.
	keepRecordNumber bool
	// keepPath is the user's include_file_path; the receiver turns it on
	// for the resume marks and the header changes either way.
	keepPath bool
	// saveHeld: storage is set, so a graceful stop saves the requests held
	// for their fallback rows, and the start holds them again.
	saveHeld bool
}

func (c *mapConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	m, err := newMapper(c.spec, c.derive)
	if err != nil {
		return nil, err
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
	o := &mapOperator{
		TransformerOperator: t,
		mapper:              m,
		tel:                 tel,
		// Bounded: the first 10 skipped rows per minute are logged, the rest only counted.
		skipLog: set.Logger.WithOptions(zap.WrapCore(func(core zapcore.Core) zapcore.Core {
			return zapcore.NewSamplerWithOptions(core, time.Minute, 10, 0)
		})),
		keepRow:          c.keepRow,
		delimiter:        d,
		headerLines:      headerLines,
		keepRecordNumber: c.keepRecordNumber,
		keepPath:         c.keepPath,
		clock:            c.clock,
		saveHeld:         c.saveHeld,
	}
	if c.spec.parent.set() {
		o.fallbacks = newFallbackRows(c.fallbacks.Wait, c.fallbacks.MaxPending)
	}
	if c.spec.csv {
		o.headers = &csvHeaders{spec: c.spec, delim: d}
		if plainDelim(d) {
			o.sep = string(d)
		}
	}
	return o, nil
}

type mapOperator struct {
	helper.TransformerOperator
	mapper           *mapper
	tel              *telemetry
	skipLog          *zap.Logger
	keepRow          bool
	delimiter        rune
	headerLines      int64
	keepRecordNumber bool
	keepPath         bool

	// fallbacks holds the rows of requests that may have failed over, for
	// formats that link a fallback's row to its request's (nil otherwise).
	fallbacks *fallbackRows
	// headers are the CSV files' columns (csv formats; nil otherwise); sep
	// is the delimiter as text when a plain line may be split on it.
	headers  *csvHeaders
	sep      string
	clock    clockwork.Clock
	stop     chan struct{}
	swept    sync.WaitGroup
	stopOnce sync.Once
	// saveHeld and persister: the held requests are saved on a graceful
	// stop and held again on start (storage set).
	saveHeld  bool
	persister operator.Persister
	journal   *heldJournal
	// emitting orders the journal after the emits: a request leaves the
	// held requests before it is emitted, and no journal write (of another
	// reader's batch, or the sweep) may record its removal, or compact it
	// away, until its emit is done. Rows are mapped and released requests
	// emitted under the read lock; the journal writes under the write lock.
	emitting sync.RWMutex
	// changes are the CSV files whose header changed inside the file, and
	// headerStore where they are saved (storage set; headerline.go).
	changes     headerChanges
	headerStore operator.Persister
	// headerSaveMu: one save of the header changes at a time.
	headerSaveMu sync.Mutex
}

// heldKey is where the held requests are saved whole, in the operator's
// scope of the receiver's storage: the journal's base (heldjournal.go), the
// layout a graceful stop always wrote.
const heldKey = "fallbacks_held"

// Start holds again the requests the storage holds (heldjournal.go), and starts
// releasing held requests whose wait is over.
func (o *mapOperator) Start(p operator.Persister) error {
	if o.headers != nil && o.saveHeld && p != nil {
		o.restoreHeaderChanges(p)
	}
	if o.fallbacks != nil {
		if o.saveHeld && p != nil {
			o.persister = p
			o.journal = &heldJournal{p: p, logger: o.Logger()}
			o.fallbacks.journal = true
			o.restoreHeld()
		}
		o.stop = make(chan struct{})
		o.swept.Add(1)
		go o.sweep()
	}
	return o.TransformerOperator.Start(p)
}

// restoreHeld holds again the requests the storage holds (heldjournal.go)
// and writes them whole as the journal's new base.
func (o *mapOperator) restoreHeld() {
	ctx := context.Background()
	if saved := o.journal.read(ctx); len(saved) > 0 {
		if rel := o.fallbacks.restore(saved, o.clock.Now(), nil); len(rel) > 0 {
			o.writeReleased(ctx, rel)
		}
	}
	o.journal.compact(ctx, o.fallbacks, o.clock.Now())
}

// saveHeldRows saves the held requests whole (a graceful stop); false when
// that failed and they are to be emitted instead.
func (o *mapOperator) saveHeldRows() bool {
	if !o.journal.save(context.Background(), o.fallbacks, o.clock.Now()) {
		o.Logger().Warn("saving the held gateway rows failed; they are emitted as they are")
		return false
	}
	ctx := context.Background()
	for range o.fallbacks.drain(nil) {
		o.tel.fallbackWait(ctx, waitSaved)
	}
	return true
}

// journalHeld journals the changes to the held requests (storage set).
func (o *mapOperator) journalHeld(ctx context.Context) {
	if o.journal != nil && o.journal.due(o.fallbacks) {
		o.emitting.Lock()
		defer o.emitting.Unlock()
		o.journal.flush(ctx, o.fallbacks, o.clock.Now())
	}
}

// sweepEvery is how often held requests are checked against their wait:
// a tenth of it, within [10 ms, 1 s].
func (o *mapOperator) sweepEvery() time.Duration {
	return min(max(o.fallbacks.wait/10, 10*time.Millisecond), time.Second)
}

func (o *mapOperator) sweep() {
	defer o.swept.Done()
	t := o.clock.NewTicker(o.sweepEvery())
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.Chan():
			o.emitting.RLock()
			r := o.fallbacks.expired(o.clock.Now(), nil)
			if len(r) > 0 {
				o.writeReleased(context.Background(), r)
			}
			o.emitting.RUnlock()
			if len(r) > 0 {
				o.journalHeld(context.Background())
			}
		}
	}
}

// Stop saves the requests still held (storage set) or emits them as they
// are: the stages after the mapping stop after it, so nothing read is lost
// on a graceful stop.
func (o *mapOperator) Stop() error {
	o.stopOnce.Do(func() {
		if o.stop == nil {
			return
		}
		close(o.stop)
		o.swept.Wait()
		if o.persister != nil && o.saveHeldRows() {
			return
		}
		if r := o.fallbacks.drain(nil); len(r) > 0 {
			o.writeReleased(context.Background(), r)
		}
	})
	return o.TransformerOperator.Stop()
}

func (o *mapOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	kept := make([]*entry.Entry, 0, len(entries))
	if o.journal != nil {
		o.emitting.RLock()
	}
	for _, e := range entries {
		if o.mapEntry(ctx, e) {
			kept = append(kept, e)
		}
	}
	if o.journal != nil {
		o.emitting.RUnlock()
	}
	o.journalHeld(ctx)
	if len(kept) == 0 {
		return nil
	}
	o.tel.mapped(ctx, int64(len(kept)))
	return o.WriteBatch(ctx, kept)
}

func (o *mapOperator) Process(ctx context.Context, e *entry.Entry) error {
	if o.journal != nil {
		o.emitting.RLock()
	}
	keep := o.mapEntry(ctx, e)
	if o.journal != nil {
		o.emitting.RUnlock()
	}
	o.journalHeld(ctx)
	if !keep {
		return nil
	}
	o.tel.mapped(ctx, 1)
	return o.Write(ctx, e)
}

// mapEntry rewrites e into a request record, or counts and logs why not. It
// reports whether e is to be emitted now: a row held for its request's
// fallback rows is not (it is counted as mapped here), and a request whose
// rows came together is emitted from here as one record.
func (o *mapOperator) mapEntry(ctx context.Context, e *entry.Entry) bool {
	var reason string
	var m mapped
	if row, isRow := e.Body.(map[string]any); isRow {
		v := rowView{row: row}
		reason = o.mapper.mapView(&v, &m.row)
	} else if o.headers != nil {
		var drop bool
		if reason, drop = o.mapCSV(ctx, e, &m.row); drop {
			return false
		}
	} else {
		reason = o.unparsedReason(e)
	}
	if reason != "" {
		o.tel.skipped(ctx, reason)
		if ce := o.skipLog.Check(zapcore.WarnLevel, "skipped gateway row"); ce != nil {
			ce.Write(zap.String("reason", reason), zap.String("file", fileOf(e)), zap.Int64("line", o.lineOf(e)))
		}
		return false
	}
	if m.row.Rejected != "" {
		o.tel.ttftRejected(ctx, m.row.Rejected)
	}
	m.row.RefusedValues(func(reason string) { o.tel.valueRejected(ctx, reason) })
	if o.fallbacks != nil {
		if !o.keepRow {
			e.Body = nil // a held row needs its attributes, not the parsed row
		}
		rel, held, dup := o.fallbacks.add(e, &m.row, o.clock.Now(), nil)
		if dup {
			o.tel.skipped(ctx, reasonAlreadyRead)
			return false
		}
		if len(rel) > 0 {
			o.writeReleased(ctx, rel)
		}
		if held {
			o.tel.mapped(ctx, 1)
			return false
		}
	}
	o.stamp(e, &m.row)
	return true
}

// stamp writes the record into e's attributes, which stanza converts to
// pdata once. What the file input and the user set (log.file.*,
// attributes:) is kept, the receiver's own plumbing is not.
func (o *mapOperator) stamp(e *entry.Entry, r *derive.GatewayRecord) {
	out := make(map[string]any, len(e.Attributes)+recordKeys)
	for k, v := range e.Attributes {
		if k == headerAttribute || k == headerTooLongAttribute || (k == attrs.LogFileRecordNumber && !o.keepRecordNumber) || (k == attrs.LogFilePath && !o.keepPath) {
			continue
		}
		out[k] = v
	}
	r.Record.WriteRaw(out)
	e.Attributes = out
	if r.HasStart {
		e.Timestamp = r.Start
	} else {
		e.Timestamp = e.ObservedTimestamp
	}
	if !o.keepRow {
		e.Body = nil
	}
}

// recordKeys is about the number of keys a request record writes.
const recordKeys = 16

// writeReleased emits released requests, each folded into one record on
// the entry of its own row.
func (o *mapOperator) writeReleased(ctx context.Context, rel []released) {
	kept := make([]*entry.Entry, 0, len(rel))
	for _, r := range rel {
		o.tel.fallbackWait(ctx, r.result)
		rows := r.req.rows
		if len(rows) == 1 {
			o.stamp(rows[0].e, &rows[0].row)
			kept = append(kept, rows[0].e)
			continue
		}
		o.tel.folded(ctx, int64(len(rows)-1))
		carrier := rows[0].e
		parts := make([]*derive.GatewayRecord, len(rows))
		for i := range rows {
			parts[i] = &rows[i].row
			if rows[i].row.ParentID == "" {
				carrier = rows[i].e // the request's own row carries its record
			}
		}
		var folded derive.GatewayRecord
		o.mapper.derive.FoldFallbacks(parts, &folded)
		// What the fold refused on the client's clock; each row's own
		// refusals were counted when it was mapped.
		if folded.Rejected != "" {
			o.tel.ttftRejected(ctx, folded.Rejected)
		}
		folded.RefusedValues(func(reason string) { o.tel.valueRejected(ctx, reason) })
		o.stamp(carrier, &folded)
		kept = append(kept, carrier)
	}
	if err := o.WriteBatch(ctx, kept); err != nil {
		o.Logger().Warn("emitting held gateway rows", zap.Error(err))
	}
}

// mapCSV reads e's CSV line under its file's header and maps it into
// out. A line that does not read into the header's columns is skipped
// with unparsedReason's reason; a header line inside the file, as
// header_line (headerline.go). drop is a row whose header attribute is not
// text: stanza's csv_parser logs it and passes nothing on.
func (o *mapOperator) mapCSV(ctx context.Context, e *entry.Entry, out *derive.GatewayRecord) (reason string, drop bool) {
	h := e.Attributes[headerAttribute]
	if h == nil {
		return o.unparsedReason(e), false
	}
	first, ok := h.(string)
	if !ok {
		o.Logger().Error("header must be string", zap.String("type", fmt.Sprintf("%T", h)))
		return "", true
	}
	header := first
	n, _ := e.Attributes[attrs.LogFileRecordNumber].(int64)
	if o.changes.any.Load() {
		var ended bool
		if header, ended = o.changes.header(pathOf(e), first, n); ended {
			o.saveHeaderChanges(ctx)
		}
	}
	cols := o.headers.columns(header)
	line, ok := csvLine(e.Body)
	if !ok {
		return o.unparsedReason(e), false
	}
	fields, err := splitCSVRow(line, o.delimiter, o.sep)
	if err != nil {
		return o.unparsedReason(e), false
	}
	if len(fields) == len(cols.names) {
		v := rowView{cols: cols, fields: fields}
		if reason = o.mapper.mapView(&v, out); reason == "" {
			if o.keepRow {
				e.Body = cols.object(fields)
			}
			return "", false
		}
	}
	if isHeaderLine(cols, fields) {
		o.headerLine(ctx, pathOf(e), first, header, n, fields)
		return reasonHeaderLine, false
	}
	if reason == "" {
		reason = o.unparsedReason(e)
	}
	return reason, false
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

// pathOf is the path of e's file: the file input always sets it for the
// receiver's operators (stamp drops it unless include_file_path is on).
func pathOf(e *entry.Entry) string {
	p, _ := e.Attributes[attrs.LogFilePath].(string)
	return p
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
