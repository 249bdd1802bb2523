package llmgatewaylogreceiver // import "github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver"

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
)

// stanza's file consumer saves its checkpoint (offset and record number per
// file) only at the end of a poll and on a graceful stop, and a poll reads
// each file to its end: after a crash during the first read of a large
// export, it starts that file again from row 0. None of its options
// (max_batches, max_concurrent_files) bound the rows of one file per poll.
// The resume operator adds the missing mark: every resumeEveryRows rows (or
// resumeEvery, whichever comes first) it saves, in the same storage, the
// highest record number it passed on per file; when stanza reads the same
// file (same first bytes, under any name) again from an older checkpoint,
// rows up to that mark are dropped and counted as already_read. A mark
// never covers rows it did not pass on (see ProcessBatch).
const (
	resumeOperatorType = "llm_gateway_log_resume"
	// resumeEveryRows bounds what a crash re-reads: at most this many rows
	// per file being read.
	resumeEveryRows = 10_000
	// resumeEvery bounds it for slowly appended files too.
	resumeEvery = time.Second
	// resumeForget drops the state of a file held in memory once its mark
	// is saved and it was not read for this long.
	resumeForget = time.Hour
	// resumeFingerprintBytes of a file's beginning identify it when
	// fingerprint_size is not set: stanza's default fingerprint_size.
	resumeFingerprintBytes = 1000
	reasonAlreadyRead      = "already_read"
)

type resumeConfig struct {
	helper.TransformerConfig
	format string
	// fingerprintSize is the file input's fingerprint_size: a mark follows
	// the file stanza takes for the same one, no other (0: the default).
	fingerprintSize int
}

func (c *resumeConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	tel, err := newTelemetry(set, c.format)
	if err != nil {
		return nil, err
	}
	fp := c.fingerprintSize
	if fp <= 0 {
		fp = resumeFingerprintBytes
	}
	return &resumeOperator{TransformerOperator: t, tel: tel, files: map[string]*resumeFile{}, now: time.Now, fpBytes: fp}, nil
}

type resumeOperator struct {
	helper.TransformerOperator
	tel       *telemetry
	now       func() time.Time
	persister operator.Persister
	// fpBytes of a file's beginning identify it (fingerprint_size).
	fpBytes int

	mu    sync.Mutex
	files map[string]*resumeFile
}

// resumeMark is what is saved per file: under its fingerprint, or under
// its path while it is shorter than a fingerprint.
type resumeMark struct {
	// Record is the highest record number passed on.
	Record int64 `json:"record"`
	// Prefix is the SHA-256 of the file's first PrefixLen bytes.
	Prefix    []byte `json:"prefix"`
	PrefixLen int    `json:"prefix_len"`
}

type resumeFile struct {
	mark     resumeMark
	skipUpTo int64 // rows up to this record number were passed on before a crash
	last     int64 // highest record number seen in this run
	unsaved  int64
	saved    time.Time
}

func (o *resumeOperator) Start(p operator.Persister) error {
	o.persister = p
	return nil
}

// Stop saves every mark, so a graceful stop loses nothing stanza's own
// checkpoint would not cover anyway.
func (o *resumeOperator) Stop() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	for path, f := range o.files {
		if f.unsaved > 0 {
			errs = append(errs, o.save(context.Background(), path, f))
		}
	}
	return errors.Join(errs...)
}

// ProcessBatch passes on the rows past their file's mark and moves the
// mark. Rows whose context is cancelled before they get here (a stop while
// stanza reads) are neither passed on nor marked: stanza does not
// checkpoint a batch whose context was cancelled during its emit
// (reader.emitBatch in its file consumer) and reads it again, so they are
// delivered then, once. Rows passed on before the cancel keep their mark,
// and the mark drops them when stanza reads them again: stanza's emitter
// hands a full batch to the next consumer at once, with this context, and
// the rest on stop. A next consumer that drops data for a cancelled
// context would lose such rows; the genai_ttft connector, the batch
// processor and exporters' sending queues do not.
func (o *resumeOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	if ctx.Err() != nil {
		return nil
	}
	kept := entries[:0:0]
	o.mu.Lock()
	now := o.now()
	for _, e := range entries {
		if o.keep(ctx, e) {
			kept = append(kept, e)
		}
	}
	o.mu.Unlock()
	if len(kept) == 0 {
		return nil
	}
	err := o.WriteBatch(ctx, kept)
	o.saveDue(ctx, now)
	return err
}

// Process is ProcessBatch for one row.
func (o *resumeOperator) Process(ctx context.Context, e *entry.Entry) error {
	if ctx.Err() != nil {
		return nil
	}
	o.mu.Lock()
	keep := o.keep(ctx, e)
	o.mu.Unlock()
	if !keep {
		return nil
	}
	err := o.Write(ctx, e)
	o.saveDue(ctx, o.now())
	return err
}

// keep reports whether e is a row not passed on before a crash. Called
// with mu held.
func (o *resumeOperator) keep(ctx context.Context, e *entry.Entry) bool {
	// The path stays on e for the mapping, which drops it unless
	// include_file_path is on.
	path, _ := e.Attributes[attrs.LogFilePath].(string)
	n, ok := e.Attributes[attrs.LogFileRecordNumber].(int64)
	if path == "" || !ok {
		return true
	}
	f := o.files[path]
	if f == nil {
		f = o.load(ctx, path)
		o.files[path] = f
	} else if n <= f.last {
		// Record numbers went back: stanza reads this path from its start
		// again. The same file (its whole fingerprint unchanged) keeps its
		// mark; new content (truncated or replaced) has none.
		cur := resumeMark{Record: f.mark.Record}
		cur.Prefix, cur.PrefixLen = o.prefixOf(path)
		if cur.PrefixLen == o.fpBytes && sameFile(cur, f.mark) {
			f.skipUpTo = max(f.skipUpTo, f.mark.Record)
		} else {
			f.skipUpTo = 0
			f.mark = cur
		}
	}
	f.last = n
	if n <= f.skipUpTo {
		o.tel.skipped(ctx, reasonAlreadyRead)
		return false
	}
	f.mark.Record = n
	f.unsaved++
	return true
}

// load reads the saved mark of the file at path: the one saved under its
// fingerprint (its first resumeFingerprintBytes, whatever its name now),
// else the one saved under its path, when the file still starts with the
// same bytes.
func (o *resumeOperator) load(ctx context.Context, path string) *resumeFile {
	f := &resumeFile{last: -1, saved: o.now()}
	f.mark.Prefix, f.mark.PrefixLen = o.prefixOf(path)
	if o.persister == nil {
		return f
	}
	if m, ok := o.get(ctx, o.fingerprintKey(f.mark)); ok && sameFile(m, f.mark) {
		f.skipUpTo = m.Record
		return f
	}
	m, ok := o.get(ctx, path)
	if !ok {
		return f
	}
	if sum, n := prefixLen(path, m.PrefixLen); n == m.PrefixLen && string(sum) == string(m.Prefix) {
		f.skipUpTo = m.Record
	}
	return f
}

func (o *resumeOperator) get(ctx context.Context, key string) (resumeMark, bool) {
	var m resumeMark
	if key == "" {
		return m, false
	}
	b, err := o.persister.Get(ctx, key)
	if err != nil || len(b) == 0 || json.Unmarshal(b, &m) != nil || m.PrefixLen <= 0 {
		return m, false
	}
	return m, true
}

// fingerprintKey is where the mark of a file with a whole fingerprint is
// saved, so that it follows the file when it is renamed (rotated) while
// the collector is down, as stanza's checkpoint does. A file shorter than
// that has none yet: its mark is saved under its path until it has grown.
func (o *resumeOperator) fingerprintKey(m resumeMark) string {
	if m.PrefixLen != o.fpBytes {
		return ""
	}
	return "fingerprint/" + hex.EncodeToString(m.Prefix)
}

// storageKey is where the mark of the file at path is saved.
func (o *resumeOperator) storageKey(path string, m resumeMark) string {
	if key := o.fingerprintKey(m); key != "" {
		return key
	}
	return path
}

// sameFile reports whether two marks name the same first bytes.
func sameFile(a, b resumeMark) bool {
	return a.PrefixLen == b.PrefixLen && string(a.Prefix) == string(b.Prefix)
}

// saveDue saves the marks that are resumeEveryRows rows or resumeEvery old.
func (o *resumeOperator) saveDue(ctx context.Context, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for path, f := range o.files {
		if f.unsaved >= resumeEveryRows || (f.unsaved > 0 && now.Sub(f.saved) >= resumeEvery) {
			if err := o.save(ctx, path, f); err != nil {
				o.Logger().Warn("saving the resume mark failed", zap.String("path", path), zap.Error(err))
			}
			f.saved = now
		}
		if f.unsaved == 0 && now.Sub(f.saved) > resumeForget {
			// Saved and read no further for long: a file stanza is done
			// with, and whose end its own checkpoint holds (exports named
			// by date pile up). Its mark goes, in memory and in storage.
			delete(o.files, path)
			o.forget(ctx, path, f.mark)
		}
	}
}

func (o *resumeOperator) save(ctx context.Context, path string, f *resumeFile) error {
	f.unsaved = 0
	if o.persister == nil || f.mark.PrefixLen == 0 {
		return nil
	}
	if f.mark.PrefixLen < o.fpBytes {
		// Short when first seen: take the whole fingerprint once the
		// file has grown, if it still starts with the same bytes; the
		// mark saved under its path goes.
		if b := readPrefix(path, o.fpBytes); len(b) > f.mark.PrefixLen {
			if old := sha256.Sum256(b[:f.mark.PrefixLen]); string(old[:]) == string(f.mark.Prefix) {
				sum := sha256.Sum256(b)
				f.mark.Prefix, f.mark.PrefixLen = sum[:], len(b)
				if len(b) == o.fpBytes {
					if err := o.persister.Delete(ctx, path); err != nil {
						o.Logger().Debug("deleting the short file's resume mark failed", zap.String("path", path), zap.Error(err))
					}
				}
			}
		}
	}
	b, err := json.Marshal(f.mark)
	if err != nil {
		return err
	}
	if o.fingerprintKey(f.mark) != "" && o.passedOnElsewhere(path, f.mark) {
		// Renamed while being read: the entry under the new name
		// holds the later mark.
		return nil
	}
	return o.persister.Set(ctx, o.storageKey(path, f.mark), b)
}

// forget deletes the saved mark of a file no longer read.
func (o *resumeOperator) forget(ctx context.Context, path string, m resumeMark) {
	if o.persister == nil || m.PrefixLen == 0 || o.passedOnElsewhere(path, resumeMark{Record: -1, Prefix: m.Prefix, PrefixLen: m.PrefixLen}) {
		return
	}
	if err := o.persister.Delete(ctx, o.storageKey(path, m)); err != nil {
		o.Logger().Debug("deleting a resume mark failed", zap.String("path", path), zap.Error(err))
	}
}

// passedOnElsewhere reports whether the same file under another path has
// a later mark. Called with mu held.
func (o *resumeOperator) passedOnElsewhere(path string, m resumeMark) bool {
	for p, g := range o.files {
		if p != path && g.mark.Record > m.Record && sameFile(g.mark, m) {
			return true
		}
	}
	return false
}

// prefixOf hashes up to fpBytes of the file's beginning.
func (o *resumeOperator) prefixOf(path string) ([]byte, int) { return prefixLen(path, o.fpBytes) }

func prefixLen(path string, n int) ([]byte, int) {
	b := readPrefix(path, n)
	if b == nil {
		return nil, 0
	}
	sum := sha256.Sum256(b)
	return sum[:], len(b)
}

// readPrefix reads up to n bytes of the file's beginning; nil when it
// cannot be read.
func readPrefix(path string, n int) []byte {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	buf := make([]byte, n)
	got, err := io.ReadFull(fh, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return buf[:got]
}
