package e2eload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Pipeline is one collector configuration under test.
type Pipeline struct {
	Name        string
	Description string
	// Spanmetrics: runs on the spanmetrics distribution, not otelcol-ttft.
	Spanmetrics bool
	// Baseline: runs on the baseline otelcol-ttft binary (Options.Baseline).
	Baseline bool
	// YAML blocks, each indented under its top-level key; %[3]d is the
	// prometheus exporter's port.
	processors, connectors, exporters, pipelines string
}

// flushInterval of both connectors: genai_ttft's default, both alike.
const flushInterval = 15 * time.Second

// The processor's settings in (b) and (c).
const ttftProcessor = `  genai_ttft:
    derive:
      prompt_bands: [2000, 16000, 64000]
      route_attribute: ttft.route
  batch: {}
`

// The connector's settings in (b) and its variants, stamped_only aside.
const ttftConnector = `  genai_ttft:
    derive:
      prompt_bands: [2000, 16000, 64000]
      route_attribute: ttft.route
    flush_interval: 15s
`

// skipPlainScope is the derive::skip_scopes of (bs): the scope of the
// plain spans (corpus.go), which holds no LLM call.
const skipPlainScope = "      skip_scopes: [go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp]\n"

const promExporter = `  prometheus:
    endpoint: 127.0.0.1:%[3]d
`

// Pipelines are (a), (b) and (c) of the benchmark.
var Pipelines = []Pipeline{
	{
		Name:        "a",
		Description: "otlp → batch → debug (no project component)",
		processors:  "  batch: {}\n",
		pipelines: `    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
`,
	},
	{
		Name:        "b",
		Description: "otlp → genai_ttft → batch → debug + genai_ttft connector (stamped_only) → prometheus",
		processors:  ttftProcessor,
		// The processor runs before the connector, so the connector reads
		// its records and derives nothing (config/default.yaml does the same).
		connectors: ttftConnector + "    stamped_only: true\n",
		exporters:  promExporter,
		pipelines: `    traces:
      receivers: [otlp]
      processors: [genai_ttft, batch]
      exporters: [debug, genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [prometheus]
`,
	},
	{
		Name:        "c",
		Description: "as (b) with contrib spanmetrics v0.165.1 in place of the genai_ttft connector",
		Spanmetrics: true,
		processors:  ttftProcessor,
		// The dimensions and histogram of the connector benchmark in this
		// module (bench_test.go): genai_ttft's, on exponential histograms.
		connectors: `  span_metrics:
    histogram:
      unit: s
      exponential:
        max_size: 160
    dimensions:
      - name: ttft.outcome
      - name: ttft.prompt_band
      - name: ttft.measured_at
      - name: ttft.observer
      - name: ttft.attempts
      - name: gen_ai.provider.name
      - name: gen_ai.request.model
      - name: ttft.route
    aggregation_cardinality_limit: 5000
    metrics_flush_interval: 15s
`,
		exporters: promExporter,
		pipelines: `    traces:
      receivers: [otlp]
      processors: [genai_ttft, batch]
      exporters: [debug, span_metrics]
    metrics:
      receivers: [span_metrics]
      exporters: [prometheus]
`,
	},
}

// Control is (a) on the spanmetrics distribution, not run by default: it
// shows whether the two binaries cost the same before any component of
// ours or contrib's is in the pipeline (-pipelines a,a2).
var Control = Pipelines[0].renamed("a2", "(a) on the spanmetrics distribution (control for comparing the two binaries)", true, false)

// renamed is p's configuration under another name, on the spanmetrics
// variant or the baseline build.
func (p Pipeline) renamed(name, description string, spanmetrics, baseline bool) Pipeline {
	p.Name, p.Description, p.Spanmetrics, p.Baseline = name, description, spanmetrics, baseline
	return p
}

// ControlB is (b) on the spanmetrics distribution, not run by default:
// beside (a2) and (f), all three on one binary, it compares (b) with the
// floor without the spread between builds (-pipelines a2,b2,f).
var ControlB = Pipelines[1].renamed("b2", "(b) on the spanmetrics distribution (beside a2 and f, all on one binary)", true, false)

// BaselineB is (b) on a baseline build of otelcol-ttft (say, of the commit
// before a change), not run by default: beside (b) in the same run it
// measures what a change did, on the same requests at the same moments
// (-baseline and -pipelines a,b,b0). The baseline must know (b)'s settings:
// builds before the connector's stamped_only refuse its configuration.
var BaselineB = Pipelines[1].renamed("b0", "(b) on the baseline otelcol-ttft binary (-baseline)", false, true)

// Splits are (b) in parts, not run by default: the processor alone, the
// connector alone (which then derives every call itself), and (b) with a
// connector that scans every span for calls as if no processor were in
// front (no stamped_only). Beside (a) and (b) they show which component
// adds what (-pipelines a,b,bp,bk,bd). And (b) with the plain spans' scope
// in derive::skip_scopes of both components (bs).
var Splits = []Pipeline{
	{
		Name:        "bp",
		Description: "otlp → genai_ttft → batch → debug (the processor of (b) alone)",
		processors:  ttftProcessor,
		pipelines: `    traces:
      receivers: [otlp]
      processors: [genai_ttft, batch]
      exporters: [debug]
`,
	},
	{
		Name:        "bk",
		Description: "otlp → batch → debug + genai_ttft connector → prometheus (the connector of (b) alone)",
		processors:  Pipelines[0].processors,
		connectors:  ttftConnector,
		exporters:   promExporter,
		pipelines: `    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug, genai_ttft]
    metrics:
      receivers: [genai_ttft]
      exporters: [prometheus]
`,
	},
	{
		Name:        "bs",
		Description: "as (b), both components with derive::skip_scopes naming the plain spans' instrumentation scope",
		processors:  strings.Replace(ttftProcessor, "      route_attribute: ttft.route\n", "      route_attribute: ttft.route\n"+skipPlainScope, 1),
		connectors:  strings.Replace(ttftConnector, "      route_attribute: ttft.route\n", "      route_attribute: ttft.route\n"+skipPlainScope, 1) + "    stamped_only: true\n",
		exporters:   promExporter,
		pipelines:   Pipelines[1].pipelines,
	},
	{
		Name:        "bd",
		Description: "as (b), the connector without stamped_only (it scans every span for calls)",
		processors:  ttftProcessor,
		connectors:  ttftConnector,
		exporters:   promExporter,
		pipelines:   Pipelines[1].pipelines,
	},
}

// runsOurProcessor and runsOurConnector say whether the pipeline's
// configuration has the genai_ttft processor or connector, whose counters
// then account for its GenAI spans.
func (p Pipeline) runsOurProcessor() bool { return strings.Contains(p.processors, "  genai_ttft:") }
func (p Pipeline) runsOurConnector() bool { return strings.Contains(p.connectors, "  genai_ttft:") }

// Floor is (b) with the ttft_floor processor and connector (bench/floor)
// in place of genai_ttft's, not run by default: one pass over each span's
// keys in each component, the chunk loop and the stamping on GenAI spans,
// and one read of each record, with no rule and no aggregation. It is the
// least a pair of genai_ttft's design can cost, so (f)/(a) bounds what any
// implementation of it can reach, and (b)/(f) is what genai_ttft's rules,
// windows and metrics add (-pipelines a,a2,b,f). It runs on the spanmetrics
// variant, which carries the two: (a2) is (a) on that binary.
var Floor = Pipeline{
	Name:        "f",
	Description: "as (b) with the ttft_floor processor and connector (bench/floor): a key pass on every span in each, the chunk loop and stamping, no rule (spanmetrics variant)",
	Spanmetrics: true,
	processors:  "  ttft_floor: {}\n  batch: {}\n",
	connectors:  "  ttft_floor: {}\n",
	exporters:   promExporter,
	pipelines: `    traces:
      receivers: [otlp]
      processors: [ttft_floor, batch]
      exporters: [debug, ttft_floor]
    metrics:
      receivers: [ttft_floor]
      exporters: [prometheus]
`,
}

// PipelineByName finds a pipeline.
func PipelineByName(name string) (Pipeline, error) {
	for _, p := range append(append(Pipelines, Control, ControlB, BaselineB, Floor), Splits...) {
		if p.Name == name {
			return p, nil
		}
	}
	return Pipeline{}, fmt.Errorf("unknown pipeline %q (a, b, c, a2, b2, b0, f, bp, bk, bs, bd)", name)
}

// configFor is the pipeline's collector configuration. Every pipeline shares
// the receiver on loopback, the debug exporter at basic verbosity (one log
// line a batch), and the collector's own metrics on a pull endpoint so the
// harness can count spans.
func configFor(p Pipeline, otlp, telemetry, prom int) string {
	var b strings.Builder
	b.WriteString(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[1]d
processors:
` + p.processors)
	if p.connectors != "" {
		b.WriteString("connectors:\n" + p.connectors)
	}
	b.WriteString(`exporters:
  debug:
    verbosity: basic
` + p.exporters + `service:
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[2]d
  pipelines:
` + p.pipelines)
	return fmt.Sprintf(b.String(), otlp, telemetry, prom)
}

// collector is one running distribution.
type collector struct {
	cmd           *exec.Cmd
	done          chan struct{}
	log           string
	otlpURL       string
	telemetryURL  string
	prometheusURL string
}

func startCollector(ctx context.Context, bin, dir string, p Pipeline) (*collector, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "config-"+p.Name+".yaml")
	if err := os.WriteFile(path, []byte(configFor(p, ports[0], ports[1], ports[2])), 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "collector-"+p.Name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", path) //nolint:gosec // the binary under test, given by the user
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	c := &collector{
		cmd: cmd, done: make(chan struct{}), log: logPath,
		otlpURL:       fmt.Sprintf("http://127.0.0.1:%d/v1/traces", ports[0]),
		telemetryURL:  fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1]),
		prometheusURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[2]),
	}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	if err := c.waitReady(ctx, 30*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// waitReady waits until the collector's telemetry answers and the OTLP port
// accepts connections.
func (c *collector) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	host := strings.TrimSuffix(strings.TrimPrefix(c.otlpURL, "http://"), "/v1/traces")
	for {
		select {
		case <-c.done:
			return fmt.Errorf("collector exited at start-up:\n%s", c.logTail())
		default:
		}
		if _, err := c.metrics(ctx, c.telemetryURL); err == nil {
			if conn, err := net.DialTimeout("tcp", host, time.Second); err == nil {
				conn.Close()
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("collector not ready within %s:\n%s", limit, c.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *collector) pid() int { return c.cmd.Process.Pid }

// stop sends SIGTERM, then SIGKILL after 15 s.
func (c *collector) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func (c *collector) logTail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// metrics scrapes a Prometheus text endpoint and sums every series by metric
// name (labels dropped, a _total suffix too: the collector's own metrics go
// without it, the prometheus exporter's with it).
func (c *collector) metrics(ctx context.Context, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		// The value follows the labels (which may hold spaces in quotes).
		rest := line[len(name):]
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				return nil, fmt.Errorf("bad metrics line %q", line)
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("bad metrics line %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("bad metrics line %q: %w", line, err)
		}
		out[strings.TrimSuffix(name, "_total")] += v
	}
	return out, sc.Err()
}

func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// procStat is what /proc says about a process: CPU in clock ticks (all
// threads, user + system, /proc/<pid>/stat), the same in nanoseconds summed
// over its live threads (/proc/<pid>/task/*/schedstat; -1 where the kernel
// gives none), and peak RSS.
type procStat struct {
	ticks  int64
	runNS  int64
	peakKB int64
}

// cpuSeconds is the CPU the process used from st0 to st1. A tick is 10 ms,
// ±1 of it at each end 2–3% of a run's second of CPU, so the nanosecond
// sum is used; but it misses a thread that exited in between, so where the
// ticks count more than it by over two ticks, the ticks are used.
func cpuSeconds(st0, st1 procStat, ticksPerSec float64) float64 {
	byTicks := float64(st1.ticks-st0.ticks) / ticksPerSec
	if st0.runNS < 0 || st1.runNS < 0 {
		return byTicks
	}
	byNS := float64(st1.runNS-st0.runNS) / 1e9
	if byTicks-byNS > 2/ticksPerSec || byNS < 0 {
		return byTicks
	}
	return byNS
}

// runNanos sums the time on CPU of the process's live threads, the first
// field of each thread's schedstat; -1 when there is none to read.
func runNanos(pid int) int64 {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return -1
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited: cpuSeconds falls back to ticks
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return -1
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		sum += v
	}
	return sum
}

func readProc(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold spaces: count fields
	// after its closing parenthesis. utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procStat{}, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return procStat{}, errors.New("unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, err
	}
	st := procStat{ticks: utime + stime, runNS: runNanos(pid)}
	if s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(s), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb := strings.Fields(rest)
				if len(kb) > 0 {
					st.peakKB, _ = strconv.ParseInt(kb[0], 10, 64)
				}
			}
		}
	}
	return st, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times.
func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 100 // what Linux exposes on every architecture Go supports
}
