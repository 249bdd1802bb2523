// Package bench compares the genai_ttft connector with contrib's spanmetrics
// connector on the same corpus of stamped spans. It is a separate module so
// spanmetrics stays out of the main go.mod. Run:
//
//	cd bench && go test -run '^$' -bench . -benchmem
//
// BenchmarkInterleavedProcesses runs each connector in a child process of
// its own (the test binary again, as TestInterleavedWorker), so that each
// process's CPU time counts its own garbage collection and no other's.
//
// The end-to-end measurement of the built distributions is in e2eload and
// cmd/bench-e2e (make bench-e2e from the repository root); floor holds the
// two components of its floor pipeline (f), built into the benchmark's
// second distribution only.
package bench
