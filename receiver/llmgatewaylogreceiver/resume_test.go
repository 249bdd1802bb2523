package llmgatewaylogreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// rowsOut records the record numbers that reach it.
type rowsOut struct{ got []int64 }

func (*rowsOut) ID() string                           { return "fake" }
func (*rowsOut) Type() string                         { return "fake" }
func (*rowsOut) Start(operator.Persister) error       { return nil }
func (*rowsOut) Stop() error                          { return nil }
func (*rowsOut) CanOutput() bool                      { return false }
func (*rowsOut) Outputs() []operator.Operator         { return nil }
func (*rowsOut) GetOutputIDs() []string               { return nil }
func (*rowsOut) SetOutputs([]operator.Operator) error { return nil }
func (*rowsOut) SetOutputIDs([]string)                {}
func (*rowsOut) CanProcess() bool                     { return true }
func (*rowsOut) Logger() *zap.Logger                  { return zap.NewNop() }

// memPersister is storage in memory, surviving a "restart" of the operator.
type memPersister map[string][]byte

func (m memPersister) Get(_ context.Context, k string) ([]byte, error) { return m[k], nil }
func (m memPersister) Set(_ context.Context, k string, v []byte) error {
	m[k] = v
	return nil
}
func (m memPersister) Delete(_ context.Context, k string) error {
	delete(m, k)
	return nil
}
func (memPersister) Batch(context.Context, ...*storage.Operation) error { return nil }

func (o *rowsOut) Process(_ context.Context, e *entry.Entry) error {
	o.got = append(o.got, e.Attributes[attrs.LogFileRecordNumber].(int64))
	return nil
}

func (o *rowsOut) ProcessBatch(ctx context.Context, es []*entry.Entry) error {
	for _, e := range es {
		_ = o.Process(ctx, e)
	}
	return nil
}

// export500 writes an export of 500 rows and returns its path.
func export500(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export.csv")
	require.NoError(t, os.WriteFile(path, []byte("request_id,ttft_ms\n"+strings.Repeat("1,200\n", 500)), 0o600))
	return path
}

// startResume builds the resume operator on persister, as one collector run.
func startResume(t *testing.T, p operator.Persister) (*resumeOperator, *rowsOut) {
	t.Helper()
	cfg := &resumeConfig{TransformerConfig: helper.NewTransformerConfig(resumeOperatorType, resumeOperatorType), format: FormatInfroCSV}
	cfg.OutputIDs = []string{"fake"}
	op, err := cfg.Build(componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	out := &rowsOut{}
	require.NoError(t, op.SetOutputs([]operator.Operator{out}))
	require.NoError(t, op.Start(p))
	return op.(*resumeOperator), out
}

// feed passes rows [from, to] of path through op in stanza-sized batches.
func feed(t *testing.T, op *resumeOperator, path string, from, to int64) {
	t.Helper()
	for n := from; n <= to; {
		var batch []*entry.Entry
		for ; n <= to && len(batch) < 100; n++ {
			e := entry.New()
			e.Attributes = map[string]any{attrs.LogFilePath: path, attrs.LogFileRecordNumber: n}
			batch = append(batch, e)
		}
		require.NoError(t, op.ProcessBatch(context.Background(), batch))
	}
}

func TestResumeAfterCrashReReadsAtMostOneMark(t *testing.T) {
	path := export500(t)
	p := memPersister{}

	// First run: 25,500 rows pass, then the process dies (no Stop).
	op, out := startResume(t, p)
	feed(t, op, path, 1, 25_500)
	require.Len(t, out.got, 25_500)

	// Second run: stanza has no checkpoint and reads the file from row 1.
	op, out = startResume(t, p)
	feed(t, op, path, 1, 40_000)
	reread := int64(0)
	for _, n := range out.got {
		if n <= 25_500 {
			reread++
		}
	}
	assert.Equal(t, int64(40_000-20_000), int64(len(out.got)), "rows up to the last mark (20,000) are dropped")
	assert.LessOrEqual(t, reread, int64(resumeEveryRows))
	assert.Equal(t, int64(20_001), out.got[0])

	// A graceful stop saves the exact mark: nothing is read twice.
	require.NoError(t, op.Stop())
	op, out = startResume(t, p)
	feed(t, op, path, 1, 40_010)
	assert.Equal(t, []int64{40_001, 40_002, 40_003, 40_004, 40_005, 40_006, 40_007, 40_008, 40_009, 40_010}, out.got)
}

func TestResumeIgnoresTheMarkOfAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.csv")
	require.NoError(t, os.WriteFile(path, []byte("request_id,ttft_ms\n1,200\n"), 0o600))
	p := memPersister{}
	op, _ := startResume(t, p)
	feed(t, op, path, 1, 300)
	require.NoError(t, op.Stop())

	// Replaced by a different export under the same name: every row is new.
	require.NoError(t, os.WriteFile(path, []byte("request_id,ttft_ms\n9,900\n"), 0o600))
	op, out := startResume(t, p)
	feed(t, op, path, 1, 300)
	assert.Len(t, out.got, 300)

	// Within a run, record numbers going back mean new content: kept.
	feed(t, op, path, 1, 5)
	assert.Len(t, out.got, 305)
}

// TestResumeCancelledBatchIsNotMarked: stanza does not checkpoint a batch
// whose context was cancelled during the emit (a graceful stop while it is
// in flight) and reads it again; a batch cancelled before it got here is
// not passed on, and the mark must not skip it either.
func TestResumeCancelledBatchIsNotMarked(t *testing.T) {
	path := export500(t)
	p := memPersister{}
	op, out := startResume(t, p)
	feed(t, op, path, 1, 300)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var batch []*entry.Entry
	for n := int64(301); n <= 400; n++ {
		e := entry.New()
		e.Attributes = map[string]any{attrs.LogFilePath: path, attrs.LogFileRecordNumber: n}
		batch = append(batch, e)
	}
	require.NoError(t, op.ProcessBatch(ctx, batch))
	require.Len(t, out.got, 300)
	require.NoError(t, op.Stop())

	// Next run: stanza reads on from its checkpoint, row 301.
	op, out = startResume(t, p)
	feed(t, op, path, 301, 500)
	assert.Len(t, out.got, 200)
	assert.Equal(t, int64(301), out.got[0])
}

// TestResumeMarkFollowsTheFileWhenRotated: the mark belongs to the file's
// content, as stanza's checkpoint does, not to its name: a file renamed
// while the collector was down keeps its mark, and the new file under the
// old name starts fresh.
func TestResumeMarkFollowsTheFileWhenRotated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export.csv")
	var rows strings.Builder
	rows.WriteString("request_id,ttft_ms\n")
	for i := range 500 {
		fmt.Fprintf(&rows, "%d,200\n", i)
	}
	require.NoError(t, os.WriteFile(path, []byte(rows.String()), 0o600))
	p := memPersister{}
	op, _ := startResume(t, p)
	feed(t, op, path, 1, 400)
	require.NoError(t, op.Stop())

	// Rotated while down; stanza reads the renamed file on from an older
	// checkpoint (row 300) and the new one from its start.
	rotated := path + ".1"
	require.NoError(t, os.Rename(path, rotated))
	require.NoError(t, os.WriteFile(path, []byte("request_id,ttft_ms\n"+strings.Repeat("9,900\n", 300)), 0o600))
	op, out := startResume(t, p)
	feed(t, op, rotated, 301, 500)
	assert.Len(t, out.got, 100)
	assert.Equal(t, int64(401), out.got[0])
	feed(t, op, path, 1, 50)
	assert.Len(t, out.got, 150)
}

// TestResumeRenamedWhileReadKeepsTheLaterMark: a file rotated while stanza
// reads it has an entry under each name; the older one's mark, saved last
// on stop, must not replace the later one.
func TestResumeRenamedWhileReadKeepsTheLaterMark(t *testing.T) {
	path := export500(t)
	p := memPersister{}
	for range 20 { // map order varies
		op, _ := startResume(t, p)
		feed(t, op, path, 1, 200)
		rotated := path + ".1"
		require.NoError(t, os.Rename(path, rotated))
		feed(t, op, rotated, 201, 400)
		require.NoError(t, op.Stop())
		op, out := startResume(t, p)
		feed(t, op, rotated, 1, 450)
		require.Len(t, out.got, 50)
		require.NoError(t, os.Rename(rotated, path))
		clear(p)
	}
}

// TestResumeForgetsFilesDoneWith: exports named by date pile up; the state
// of one read to its end and saved goes after an hour, in memory and in
// storage (stanza's own checkpoint holds its end by then).
func TestResumeForgetsFilesDoneWith(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	p := memPersister{}
	op, out := startResume(t, p)
	op.now = func() time.Time { return now }
	for day := range 30 {
		path := filepath.Join(dir, fmt.Sprintf("export-%02d.csv", day))
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("request_id,ttft_ms\n%d,200\n", day)+strings.Repeat("1,200\n", 300)), 0o600))
		feed(t, op, path, 1, 200)
		now = now.Add(2 * time.Second)
		feed(t, op, path, 201, 250) // saved now
		now = now.Add(90 * time.Minute)
	}
	assert.Len(t, out.got, 30*250)
	assert.Len(t, op.files, 1, "only the file read last")
	assert.Len(t, p, 1, "only the mark of the file read last")
}

// TestResumeSameFileReadAgainKeepsItsMark: stanza reading the same,
// unchanged file from its start again within a run (it lost track of it)
// gets no row twice; new content under the path gets every row.
func TestResumeSameFileReadAgainKeepsItsMark(t *testing.T) {
	path := export500(t)
	op, out := startResume(t, memPersister{})
	feed(t, op, path, 1, 301)
	feed(t, op, path, 1, 310)
	assert.Len(t, out.got, 310)
	assert.Equal(t, int64(302), out.got[301])

	require.NoError(t, os.WriteFile(path, []byte("request_id,ttft_ms\n"+strings.Repeat("2,300\n", 500)), 0o600))
	feed(t, op, path, 1, 20)
	assert.Len(t, out.got, 330)
}

// TestResumeShortFileMovesToItsFingerprint: a file first seen shorter
// than a fingerprint is saved under its path, then under its fingerprint
// once it has grown; the path's key goes.
func TestResumeShortFileMovesToItsFingerprint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.csv")
	require.NoError(t, os.WriteFile(path, []byte("request_id,ttft_ms\n1,200\n"), 0o600))
	p := memPersister{}
	op, _ := startResume(t, p)
	feed(t, op, path, 1, 1)
	require.NoError(t, op.Stop())
	require.Contains(t, p, path)
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fh.WriteString(strings.Repeat("1,200\n", 300))
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	feed(t, op, path, 2, 200)
	require.NoError(t, op.Stop())
	require.Len(t, p, 1)
	require.NotContains(t, p, path)

	// The next run finds the mark under the fingerprint.
	op, out := startResume(t, p)
	feed(t, op, path, 1, 250)
	assert.Len(t, out.got, 50)
}
