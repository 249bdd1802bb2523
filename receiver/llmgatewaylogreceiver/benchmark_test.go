package llmgatewaylogreceiver

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/input/file"
	csvparser "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/parser/csv"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-ttft/otelcol-ttft/receiver/llmgatewaylogreceiver/gatewayexport"
)

// stanzaCSVType is filelog as a user would configure it for the same export:
// stanza's file input (with the same per-file header reader) and csv_parser,
// no mapping. It is the baseline the mapping's cost is measured against.
type stanzaCSVType struct{}

type stanzaCSVConfig struct {
	Input file.Config
	Base  adapter.BaseConfig
}

func (stanzaCSVType) Type() component.Type                  { return component.MustNewType("stanza_csv") }
func (stanzaCSVType) CreateDefaultConfig() component.Config { return &stanzaCSVConfig{} }
func (stanzaCSVType) BaseConfig(c component.Config) adapter.BaseConfig {
	return c.(*stanzaCSVConfig).Base
}

func (stanzaCSVType) InputConfig(c component.Config) operator.Config {
	in := c.(*stanzaCSVConfig).Input
	return operator.NewConfig(&in)
}

func newStanzaCSVConfig(glob string) *stanzaCSVConfig {
	in := file.NewConfig()
	in.Include = []string{glob}
	in.StartAt = "beginning"
	in.PollInterval = 20 * time.Millisecond
	in.Header = &fileconsumer.HeaderConfig{
		Pattern: headerPattern(",", []string{"ttft_ms"}),
		MetadataOperators: []operator.Config{operator.NewConfig(&headerConfig{
			TransformerConfig: helper.NewTransformerConfig(headerOperatorType, headerOperatorType), delimiter: ",",
		})},
	}
	p := csvparser.NewConfig()
	p.HeaderAttribute = headerAttribute
	p.ParseTo = entry.RootableField{Field: entry.NewBodyField()}
	return &stanzaCSVConfig{Input: *in, Base: adapter.BaseConfig{Operators: []operator.Config{operator.NewConfig(p)}}}
}

// drain runs a receiver until want log records have arrived and returns
// how long that took.
func drain(b *testing.B, f receiver.Factory, cfg component.Config, want int64) time.Duration {
	b.Helper()
	var n atomic.Int64
	next, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		n.Add(int64(ld.LogRecordCount()))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	deadline := start.Add(10 * time.Minute)
	for n.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d rows after 10 minutes", n.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	if err := rcv.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	if got := n.Load(); got != want {
		b.Fatalf("%d rows arrived, want %d", got, want)
	}
	return elapsed
}

// writeBenchExport writes a rows-row infro_csv export (with header) into dir.
func writeBenchExport(b *testing.B, dir string, rows int) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("export-%d.csv", rows))
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err = gatewayexport.Write(fh, gatewayexport.Options{
		Rows: rows, Seed: 42, Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Header: true,
	}); err != nil {
		b.Fatal(err)
	}
	if err = fh.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// pipelines are the receiver and its peer, both reading path: the receiver
// with its default config, the peer as stanzaCSVType.
func pipelines(b *testing.B, path string) (rcv, peer func(b *testing.B, rows int64) time.Duration) {
	b.Helper()
	rcvCfg := createDefaultConfig()
	rcvCfg.InputConfig.Include = []string{path}
	rcvCfg.InputConfig.PollInterval = 20 * time.Millisecond
	if err := rcvCfg.Validate(); err != nil {
		b.Fatal(err)
	}
	peerCfg := newStanzaCSVConfig(path)
	peerFactory := adapter.NewFactory(stanzaCSVType{}, component.StabilityLevelDevelopment)
	rcv = func(b *testing.B, rows int64) time.Duration { return drain(b, NewFactory(), rcvCfg, rows) }
	peer = func(b *testing.B, rows int64) time.Duration { return drain(b, peerFactory, peerCfg, rows) }
	return rcv, peer
}

// BenchmarkThroughput1MRows reads one 1M-row infro_csv export through the
// receiver and, in the same run, through stanza's file input + csv_parser
// alone; it reports both rates and their ratio (the cost of the mapping).
// Run it with -benchtime=1x: each iteration reads 1M rows twice.
func BenchmarkThroughput1MRows(b *testing.B) {
	const rows = 1_000_000
	rcv, peer := pipelines(b, writeBenchExport(b, b.TempDir(), rows))
	var recv, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base += peer(b, rows)
		recv += rcv(b, rows)
	}
	b.StopTimer()
	recvRate := float64(rows*b.N) / recv.Seconds()
	baseRate := float64(rows*b.N) / base.Seconds()
	b.ReportMetric(recvRate, "receiver_rows/s")
	b.ReportMetric(baseRate, "stanza_csv_rows/s")
	b.ReportMetric(recvRate/baseRate, "ratio")
}

// BenchmarkPipeline is one of the two pipelines of BenchmarkThroughput1MRows
// on a smaller export, for profiles and instruction counts of each alone:
// the difference between the two sizes (callgrind, -benchtime 1x) is the
// cost of the extra rows without the pipeline's start and stop.
func BenchmarkPipeline(b *testing.B) {
	dir := b.TempDir()
	for _, rows := range []int{10_000, 50_000} {
		rcv, peer := pipelines(b, writeBenchExport(b, dir, rows))
		for _, p := range []struct {
			name string
			run  func(*testing.B, int64) time.Duration
		}{{"stanza_csv", peer}, {"receiver", rcv}} {
			b.Run(fmt.Sprintf("%s/rows=%d", p.name, rows), func(b *testing.B) {
				b.ReportAllocs()
				var d time.Duration
				for i := 0; i < b.N; i++ {
					d += p.run(b, int64(rows))
				}
				b.ReportMetric(float64(rows*b.N)/d.Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkMapRow is the mapping alone on one parsed infro_csv row.
func BenchmarkMapRow(b *testing.B) {
	m := testMapper(b, FormatInfroCSV, MappingConfig{})
	row := infroRow(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, reason := m.mapRow(row); reason != "" {
			b.Fatal(reason)
		}
	}
}

// BenchmarkMapEntry adds writing the record as the entry's attributes (the
// row is cloned each time because the mapping consumes it).
func BenchmarkMapEntry(b *testing.B) { benchMapEntry(b, false, false) }

// BenchmarkMapEntryToPdata is a parsed row's whole way after the parser (the
// way of a JSON line): the mapping, the record written into the entry, and
// stanza's conversion of the entry into a plog record (where the record
// becomes pdata).
func BenchmarkMapEntryToPdata(b *testing.B) { benchMapEntry(b, true, false) }

// BenchmarkMapCSVLineToPdata is the same row as a CSV line, as the file
// input passes it on: read into its fields under the file's header, mapped,
// written and converted.
func BenchmarkMapCSVLineToPdata(b *testing.B) { benchMapEntry(b, true, true) }

func benchMapEntry(b *testing.B, toPdata, csvLine bool) {
	ops, err := operators(createDefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var op *mapOperator
	for _, c := range ops {
		if mc, ok := c.Builder.(*mapConfig); ok {
			built, err := mc.Build(componenttest.NewNopTelemetrySettings())
			if err != nil {
				b.Fatal(err)
			}
			op = built.(*mapOperator)
		}
	}
	if op == nil {
		b.Fatal("no mapping operator")
	}
	row := infroRow(nil)
	var line strings.Builder
	for i, c := range gatewayexport.Columns {
		if i > 0 {
			line.WriteByte(',')
		}
		line.WriteString(row[c].(string))
	}
	header := strings.Join(gatewayexport.Columns, ",")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e := entry.New()
		if toPdata {
			e.Attributes = map[string]any{"log.file.name": "export.csv", "log.file.record_number": int64(7)}
		}
		if csvLine {
			e.Attributes[headerAttribute] = header
			e.Body = line.String()
		} else {
			e.Body = maps.Clone(row)
		}
		if !op.mapEntry(ctx, e) {
			b.Fatal("skipped")
		}
		if toPdata && adapter.ConvertEntries([]*entry.Entry{e}, scopeName, "").LogRecordCount() != 1 {
			b.Fatal("not converted")
		}
	}
}
