package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// A CSV row is read by the mapping operator itself, with the semantics of
// stanza's csv_parser under header_attribute (the same splitting of the
// header, the same reading of the line), but into the line's fields: the
// mapping reads the columns it maps by index, and no object of the row's
// columns is built unless keep_row asks for it (docs/architecture.md §3).

// csvColumns is one header's columns and, for each field of the spec, where
// its candidates are among them.
type csvColumns struct {
	header string
	names  []string
	// fields is indexed by field.id, then by candidate.
	fields [][]csvCandidate
	// mapped are the names of the columns the mapping reads (headerline.go).
	mapped []string
}

// csvCandidate is a candidate name's column (exact) or, for a dotted name,
// the column its first element names (head, walked as nested JSON text);
// -1 when absent.
type csvCandidate struct{ exact, head int }

func newCSVColumns(s *spec, header string, delim rune) *csvColumns {
	c := &csvColumns{header: header, names: strings.Split(header, string(delim))}
	// A name given twice is the later column, as in the object the
	// csv_parser builds.
	col := make(map[string]int, len(c.names))
	for i, n := range c.names {
		col[n] = i
	}
	at := func(name string) int {
		if i, ok := col[name]; ok {
			return i
		}
		return -1
	}
	fields := s.fields()
	c.fields = make([][]csvCandidate, len(fields))
	for _, f := range fields {
		cs := make([]csvCandidate, len(f.names))
		for i, name := range f.names {
			cs[i] = csvCandidate{exact: at(name), head: -1}
			if len(f.paths[i]) >= 2 {
				cs[i].head = at(f.paths[i][0])
			}
		}
		c.fields[f.id] = cs
	}
	c.mapped = headerNames(c)
	return c
}

// object is the row as the csv_parser would have made it (keep_row).
func (c *csvColumns) object(fields []string) map[string]any {
	m := make(map[string]any, len(c.names))
	for i, v := range fields {
		m[c.names[i]] = v
	}
	return m
}

// maxCachedHeaders bounds the headers remembered at once; files with more
// distinct headers than this have theirs split again now and then.
const maxCachedHeaders = 64

// csvHeaders remembers the columns of the headers seen. Safe for
// concurrent use (the file input reads files in parallel).
type csvHeaders struct {
	spec  *spec
	delim rune
	last  atomic.Pointer[csvColumns]
	mu    sync.Mutex
	seen  map[string]*csvColumns
}

func (h *csvHeaders) columns(header string) *csvColumns {
	if c := h.last.Load(); c != nil && c.header == header {
		return c
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.seen[header]
	if c == nil {
		if h.seen == nil || len(h.seen) >= maxCachedHeaders {
			h.seen = make(map[string]*csvColumns)
		}
		c = newCSVColumns(h.spec, header, h.delim)
		h.seen[header] = c
	}
	h.last.Store(c)
	return c
}

// csvLine returns the body as the csv_parser reads it: text or bytes.
func csvLine(body any) (string, bool) {
	switch t := body.(type) {
	case string:
		return t, true
	case []byte:
		return string(t), true
	}
	return "", false
}

// plainDelim reports whether encoding/csv accepts d as a delimiter, so that
// a line without quotes or line breaks is its fields split on d.
func plainDelim(d rune) bool {
	return d != 0 && d != '"' && d != '\r' && d != '\n' && utf8.ValidRune(d) && d != utf8.RuneError
}

// splitCSVRow reads one row's fields. A line without quotes and line
// breaks is its fields split on the delimiter, which is what encoding/csv
// reads from it; any other line is read as stanza's csv_parser reads it.
func splitCSVRow(line string, delim rune, sep string) ([]string, error) {
	if line != "" && sep != "" && strings.IndexByte(line, '"') < 0 &&
		strings.IndexByte(line, '\n') < 0 && strings.IndexByte(line, '\r') < 0 {
		return strings.Split(line, sep), nil
	}
	return readCSVRow(line, delim)
}

// readCSVRow is stanza's csv_parser reading of a row (contrib
// internal/coreinternal/parseutils.ReadCSVRow, lazy_quotes off): the
// records of a value with line breaks continue the previous record's last
// field.
func readCSVRow(row string, delim rune) ([]string, error) {
	reader := csv.NewReader(strings.NewReader(row))
	reader.Comma = delim
	reader.FieldsPerRecord = -1
	var lines [][]string
	for {
		line, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && len(line) == 0 {
			return nil, fmt.Errorf("read csv line: %w", err)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil, errors.New("no csv lines found")
	}
	joined := lines[0]
	for _, next := range lines[1:] {
		joined[len(joined)-1] += "\n" + next[0]
		joined = append(joined, next[1:]...)
	}
	return joined, nil
}
