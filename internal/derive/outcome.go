package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// timeoutOf classifies a timeout from error.type, the exception event and
// the status message (docs/architecture.md §4 outcome rules).
func (e *evidence) timeoutOf() timeoutKind {
	if e.excMsg == "" && e.statusMsg == "" && e.errorType == "" && e.excType == "" && e.errorText == "" {
		return statusTimeout(e.httpStatus) // no text to read (most calls)
	}
	// The Vercel AI SDK's messages say which limit fired.
	for _, msg := range [...]string{e.excMsg, e.statusMsg} {
		if k := messageTimeout(msg); k != timeoutNone {
			return k
		}
	}
	for _, typ := range [...]string{e.errorType, e.excType, e.errorText} {
		if k := classTimeout(typ); k != timeoutNone {
			return k
		}
	}
	// A timeout named only in the message, under a type that says nothing
	// (exception.type=Error, "APIConnectionTimeoutError: Request timed
	// out."; "context deadline exceeded").
	for _, msg := range [...]string{e.excMsg, e.statusMsg} {
		if k := textTimeout(msg); k != timeoutNone {
			return k
		}
	}
	return statusTimeout(e.httpStatus)
}

// messageTimeout reads an error message that names the limit that fired
// (the Vercel AI SDK's are exact).
func messageTimeout(msg string) timeoutKind {
	switch {
	case msg == "" || len(msg) > maxErrorText:
	case containsFold(msg, "first chunk timeout"):
		return timeoutFirstToken
	case containsFold(msg, "chunk timeout"):
		return timeoutIdle
	case containsFold(msg, "step timeout"), containsFold(msg, "total timeout"):
		return timeoutDeadline
	}
	return timeoutNone
}

// classTimeout reads an error class or type (APITimeoutError, ReadTimeout,
// DeadlineExceeded, ...).
func classTimeout(typ string) timeoutKind {
	if typ == "" || len(typ) > maxErrorText {
		return timeoutNone
	}
	if containsFold(typ, "deadline") {
		return timeoutDeadline
	}
	if containsFold(typ, "timeout") {
		return timeoutGeneric
	}
	return timeoutNone
}

// statusTimeout reads an HTTP status: 408 and 504 are timeouts.
func statusTimeout(code int64) timeoutKind {
	if code == 408 || code == 504 {
		return timeoutGeneric
	}
	return timeoutNone
}

// maxErrorText bounds the error text scanned for a timeout.
const maxErrorText = 4096

// textTimeout classifies a free-text error field, as gateway rows have one
// (a class, a code or a message): the message rules, then the class rules,
// then "timed out" and a bare 408/504. Bifrost's idle-timeout text
// ("stream idle timeout: no data received ...") is a generic timeout:
// first-token or idle by whether the request got its first token.
func textTimeout(s string) timeoutKind {
	if s == "" || len(s) > maxErrorText {
		return timeoutNone
	}
	if k := messageTimeout(s); k != timeoutNone {
		return k
	}
	if containsFold(s, "deadline") {
		return timeoutDeadline
	}
	if containsFold(s, "timeout") || containsFold(s, "timed out") {
		return timeoutGeneric
	}
	switch strings.TrimSpace(s) {
	case "408", "504":
		return timeoutGeneric
	}
	return timeoutNone
}

// timeoutOutcome turns a timeout kind into its outcome; a generic timeout
// is first-token when no first token was seen before it, else idle.
func timeoutOutcome(k timeoutKind, seen bool) (string, bool) {
	switch k {
	case timeoutFirstToken:
		return record.OutcomeTimeoutFirstToken, true
	case timeoutIdle:
		return record.OutcomeTimeoutIdle, true
	case timeoutDeadline:
		return record.OutcomeTimeoutDeadline, true
	case timeoutGeneric:
		if seen {
			return record.OutcomeTimeoutIdle, true
		}
		return record.OutcomeTimeoutFirstToken, true
	}
	return "", false
}

// failedOutcome reports an outcome after which a gateway may try another
// provider: an error or a timeout (not a completion, not a client that went
// away).
func failedOutcome(o string) bool {
	switch o {
	case record.OutcomeError, record.OutcomeTimeoutFirstToken, record.OutcomeTimeoutIdle, record.OutcomeTimeoutDeadline:
		return true
	}
	return false
}

// abandoned reports a stream the client walked away from: it ended without
// a completion marker, and without a server-side error.
func (e *evidence) abandoned() bool {
	if e.finishAbandon {
		return true
	}
	if e.statusMsg == "" && e.excMsg == "" && e.errorType == "" && e.excType == "" {
		return false // no text to read (most calls)
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
	if o, ok := timeoutOutcome(e.timeoutOf(), contentSeen); ok {
		return o
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
