package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// timeoutOf classifies a timeout from error.type, the exception event and
// the status message (docs/architecture.md §4 outcome rules).
func (e *evidence) timeoutOf() timeoutKind {
	// The Vercel AI SDK's messages say which limit fired.
	for _, msg := range [...]string{e.excMsg, e.statusMsg} {
		switch {
		case msg == "" || len(msg) > 4096:
		case containsFold(msg, "first chunk timeout"):
			return timeoutFirstToken
		case containsFold(msg, "chunk timeout"):
			return timeoutIdle
		case containsFold(msg, "step timeout"), containsFold(msg, "total timeout"):
			return timeoutDeadline
		}
	}
	for _, typ := range [...]string{e.errorType, e.excType, e.errorText} {
		if typ == "" || len(typ) > 4096 {
			continue
		}
		if containsFold(typ, "deadline") {
			return timeoutDeadline
		}
		if containsFold(typ, "timeout") {
			return timeoutGeneric
		}
	}
	if e.httpStatus == 408 || e.httpStatus == 504 {
		return timeoutGeneric
	}
	return timeoutNone
}

// abandoned reports a stream the client walked away from: it ended without
// a completion marker, and without a server-side error.
func (e *evidence) abandoned() bool {
	if e.finishAbandon {
		return true
	}
	for _, s := range [...]string{e.statusMsg, e.excMsg, e.errorType, e.excType} {
		if s != "" && len(s) <= 4096 && (containsFold(s, "abandoned stream") || containsFold(s, "AbortError")) {
			return true
		}
	}
	return false
}

// failed reports an error of any kind.
func (e *evidence) failed() bool {
	return e.status == ptrace.StatusCodeError || e.errorType != "" || e.excType != "" || e.errorText != "" ||
		e.finishError || e.httpStatus >= 400
}

// outcome applies the rules to one span's evidence. contentSeen is whether
// the call (all folded spans) is known to have produced content.
func (e *evidence) outcome(contentSeen bool) string {
	switch e.timeoutOf() {
	case timeoutFirstToken:
		return record.OutcomeTimeoutFirstToken
	case timeoutIdle:
		return record.OutcomeTimeoutIdle
	case timeoutDeadline:
		return record.OutcomeTimeoutDeadline
	case timeoutGeneric:
		if contentSeen {
			return record.OutcomeTimeoutIdle
		}
		return record.OutcomeTimeoutFirstToken
	}
	if e.abandoned() {
		return record.OutcomeClosed
	}
	if e.failed() {
		return record.OutcomeError
	}
	if e.hasFinish || e.status == ptrace.StatusCodeOk {
		return record.OutcomeComplete
	}
	return record.OutcomeClosed
}

// severity orders outcomes so that folding spans keeps the worst. Closed
// ranks below complete: it means "no completion marker", and another span
// of the same call may carry the marker.
func severity(o string) int {
	switch o {
	case record.OutcomeClosed:
		return 0
	case record.OutcomeComplete:
		return 1
	case record.OutcomeError:
		return 2
	case record.OutcomeTimeoutFirstToken:
		return 3
	case record.OutcomeTimeoutIdle:
		return 4
	case record.OutcomeTimeoutDeadline:
		return 5
	}
	return -1
}
