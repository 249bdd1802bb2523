//go:build unix

package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector"
)

// workerEnv names the connector a child of BenchmarkInterleavedProcesses
// runs; TestInterleavedWorker is that child and skips without it.
const workerEnv = "TTFT_BENCH_WORKER"

// BenchmarkInterleavedProcesses alternates the two connectors as
// BenchmarkInterleaved does, a turn each, but each in a process of its own,
// so that each pays for its own garbage. In BenchmarkInterleaved both share
// one heap, and a collection that spanmetrics' garbage started runs through
// our calls too (BenchmarkInterleavedPartner). Caches are shared as before:
// a turn of one starts right after a turn of the other on the same cores.
//
// Each child reports the CPU time all its process's threads used (the
// garbage collector's workers too, the other process's not) during its
// calls, and from the start of one turn's calls to the start of the next:
// its calls, its collections wherever they ran, and what the runtime
// spends while the process waits for its turn (0.1–0.4 ms a turn on the
// 2-core development machine, most of it system time). Our connector makes
// no garbage (no allocation a batch), so what its process uses
// between its calls is that waiting alone (wait-cpu-ns/turn), and its
// calls' CPU time is its cost. Spanmetrics' cost is its CPU time from turn
// to turn less the same waiting; it waits less a turn (our turn is the
// shorter), so if anything this takes too much off it. ns/span and speedup
// are the calls' own wall time.
//
// One iteration is one turn of each: one batch of spansPerBatch spans, as
// in BenchmarkInterleaved, or five, so that a turn starts a fifth as often
// in caches the other process filled.
func BenchmarkInterleavedProcesses(b *testing.B) {
	for _, batches := range []int{1, 5} {
		b.Run(fmt.Sprintf("batches_per_turn=%d", batches), func(b *testing.B) {
			interleaveProcesses(b, batches)
		})
	}
}

func interleaveProcesses(b *testing.B, batchesPerTurn int) {
	ours, theirs := startWorker(b, "genai_ttft"), startWorker(b, "spanmetrics")
	var oursTook, theirsTook turn
	turns := 0
	for b.Loop() {
		oursTook.add(ours.turn(b, batchesPerTurn))
		theirsTook.add(theirs.turn(b, batchesPerTurn))
		turns++
	}
	// A turn's CPU time from turn to turn is reported at the start of the
	// next; one more turn of each ends the last one.
	oursTook.cpu += ours.turn(b, 0).cpu
	theirsTook.cpu += theirs.turn(b, 0).cpu
	spans := float64(turns * batchesPerTurn * spansPerBatch)
	wait := oursTook.cpu - oursTook.calls
	oursCPU, theirsCPU := oursTook.calls, theirsTook.cpu-wait
	b.ReportMetric(float64(wait.Nanoseconds())/float64(turns), "wait-cpu-ns/turn")
	b.ReportMetric(float64(oursCPU.Nanoseconds())/spans, "genai_ttft-proc-cpu-ns/span")
	b.ReportMetric(float64(theirsCPU.Nanoseconds())/spans, "spanmetrics-proc-cpu-ns/span")
	b.ReportMetric(float64(theirsCPU)/float64(oursCPU), "proc-cpu-speedup")
	b.ReportMetric(float64(oursTook.wall.Nanoseconds())/spans, "genai_ttft-ns/span")
	b.ReportMetric(float64(theirsTook.wall.Nanoseconds())/spans, "spanmetrics-ns/span")
	b.ReportMetric(float64(theirsTook.wall)/float64(oursTook.wall), "speedup")
}

// turn is what a child reports for a turn: the CPU time its process used
// since the start of the turn before, the CPU time of that turn's calls,
// and their wall time.
type turn struct{ cpu, calls, wall time.Duration }

func (t *turn) add(u turn) {
	t.cpu, t.calls, t.wall = t.cpu+u.cpu, t.calls+u.calls, t.wall+u.wall
}

// worker is one child process of BenchmarkInterleavedProcesses.
type worker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startWorker(b testing.TB, name string) *worker {
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterleavedWorker$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), workerEnv+"="+name)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	w := &worker{cmd: cmd, in: in, out: bufio.NewReader(out)}
	b.Cleanup(func() {
		_ = in.Close() // the child ends at the end of its input
		_ = cmd.Wait()
	})
	w.read(b) // its series exist
	return w
}

// turn has the child consume n batches.
func (w *worker) turn(b testing.TB, n int) turn {
	_, err := fmt.Fprintln(w.in, n)
	require.NoError(b, err)
	return w.read(b)
}

// read reads one reply: a turn's three times, in nanoseconds.
func (w *worker) read(b testing.TB) turn {
	line, err := w.out.ReadString('\n')
	require.NoError(b, err, "worker %v", w.cmd.Args)
	f := strings.Fields(line)
	require.Len(b, f, 3, "worker replied %q", line)
	var ns [3]time.Duration
	for i := range ns {
		n, err := strconv.ParseInt(f[i], 10, 64)
		require.NoError(b, err)
		ns[i] = time.Duration(n)
	}
	return turn{cpu: ns[0], calls: ns[1], wall: ns[2]}
}

// TestInterleavedWorker is a child of BenchmarkInterleavedProcesses: it
// builds the connector workerEnv names, creates its series, and then for
// each line n of its input consumes n batches and writes what the turn
// took. It skips when run as a test.
func TestInterleavedWorker(t *testing.T) {
	name := os.Getenv(workerEnv)
	if name == "" {
		t.Skip("a child of BenchmarkInterleavedProcesses")
	}
	var impl func(testing.TB) connector.Traces
	for _, i := range impls {
		if i.name == name {
			impl = i.new
		}
	}
	require.NotNil(t, impl, "no connector %q", name)
	ctx := context.Background()
	td := Corpus(spansPerBatch, targets, 42)
	conn := impl(t)
	require.NoError(t, conn.Start(ctx, nopHost{}))
	defer func() { require.NoError(t, conn.Shutdown(ctx)) }()
	require.NoError(t, conn.ConsumeTraces(ctx, td)) // create the series
	out := bufio.NewWriter(os.Stdout)
	reply := func(took turn) {
		fmt.Fprintln(out, took.cpu.Nanoseconds(), took.calls.Nanoseconds(), took.wall.Nanoseconds())
		require.NoError(t, out.Flush())
	}
	reply(turn{})
	var start time.Duration // the CPU time at the start of the turn before
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		n, err := strconv.Atoi(in.Text())
		require.NoError(t, err)
		t0, c0 := time.Now(), processCPU(t)
		for range n {
			require.NoError(t, conn.ConsumeTraces(ctx, td))
		}
		took := turn{calls: processCPU(t) - c0, wall: time.Since(t0)}
		if start != 0 {
			took.cpu = c0 - start
		}
		start = c0
		reply(took)
	}
}

// processCPU is the user and system time of all the process's threads.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestInterleavedProcesses runs the benchmark's children for two turns:
// each consumes its batches and reports times that add up.
func TestInterleavedProcesses(t *testing.T) {
	for _, name := range []string{"genai_ttft", "spanmetrics"} {
		w := startWorker(t, name)
		first, second, end := w.turn(t, 2), w.turn(t, 1), w.turn(t, 0)
		for _, tk := range []turn{first, second} {
			require.Positive(t, tk.calls, name)
			require.Positive(t, tk.wall, name)
		}
		require.Zero(t, first.cpu, "%s: the first turn has no turn before it", name)
		// From the start of a turn to the start of the next: at least its calls.
		require.GreaterOrEqual(t, second.cpu, first.calls, name)
		require.GreaterOrEqual(t, end.cpu, second.calls, name)
		require.Less(t, end.calls, second.calls, "%s: a turn of no batch", name)
	}
}
