package ttftstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Names this package writes (documented in the README's contract).
const (
	EventChunk   = "ttft.chunk"
	EventHeaders = "ttft.headers"

	AttrChunkKind         = "ttft.chunk.kind"
	AttrChunkCount        = "ttft.chunk.count"
	AttrChunkContentCount = "ttft.chunk.content_count"
	AttrChunkMaxGap       = "ttft.chunk.max_gap"
	AttrChunkUnrecorded   = "ttft.chunk.unrecorded"
	AttrStreamEnd         = "ttft.stream.end"
	AttrInstrumentError   = "ttft.instrumentation.error"
)

// How a response ended (AttrStreamEnd).
const (
	endCompleted = "completed"    // the stream's completion marker arrived
	endEOF       = "eof"          // the body ended; for a stream: without completion marker
	endClosed    = "closed"       // the app closed the body before its end
	endCanceled  = "canceled"     // the caller's context was canceled
	endTimeout   = "timeout"      // a deadline or network timeout
	endError     = "error"        // a transport error
	endStreamErr = "stream_error" // the stream carried an error event
)

// ErrFirstTokenTimeout is what the round trip or a body read returns when
// WithFirstTokenTimeout cut the call (test it with errors.Is; the error is
// also a net.Error whose Timeout() is true).
var ErrFirstTokenTimeout = errors.New("ttftstream: first token timeout")

type timeoutError struct{ limit time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("ttftstream: first token timeout: no content within %v", e.limit)
}
func (e *timeoutError) Timeout() bool        { return true }
func (e *timeoutError) Temporary() bool      { return true }
func (e *timeoutError) Is(target error) bool { return target == ErrFirstTokenTimeout }

// firstTokenLimit is one call's WithFirstTokenTimeout: a timer that cancels
// the request's context with a timeoutError as its cause, unless it was
// stopped first (first content, end, parse failure, no stream) or the
// caller's context ended first.
type firstTokenLimit struct {
	state atomic.Int32 // limitArmed, limitStopped, limitFired
	timer *time.Timer
	err   *timeoutError
}

const (
	limitArmed int32 = iota
	limitStopped
	limitFired
)

func (l *firstTokenLimit) stop() {
	if l != nil && l.state.CompareAndSwap(limitArmed, limitStopped) {
		l.timer.Stop()
	}
}

func (l *firstTokenLimit) fired() bool { return l != nil && l.state.Load() == limitFired }

// limitFirstToken arms the limit: r.ctx becomes a child of the caller's
// context that the timer cancels.
func (r *recorder) limitFirstToken(d time.Duration) {
	parent := r.ctx
	ctx, cancel := context.WithCancelCause(parent)
	l := &firstTokenLimit{err: &timeoutError{limit: d}}
	l.timer = time.AfterFunc(d, func() {
		// The caller's own cancel or deadline wins.
		if parent.Err() == nil && l.state.CompareAndSwap(limitArmed, limitFired) {
			cancel(l.err)
		}
	})
	r.ctx, r.limit, r.release = ctx, l, cancel
}

// cutErr is err, or the timeout error when the limit cut the call (the
// transport reports the cancelled context in its own words).
func (r *recorder) cutErr(err error) error {
	if err != nil && err != io.EOF && r.limit.fired() {
		return r.limit.err
	}
	return err
}

// requestDone releases what the call holds once the request is over (the
// response body ended, failed or was closed): the limit's timer and context.
func (r *recorder) requestDone() {
	r.limit.stop()
	if r.release != nil {
		r.release(nil)
	}
}

// Limits that keep a hostile or broken stream from costing memory.
const (
	maxLine = 1 << 20 // bytes of one SSE line kept; longer lines are cut
)

var kindAttrs = func() (a [len(kindNames)]trace.EventOption) {
	for k := range kindNames {
		a[k] = trace.WithAttributes(attribute.String(AttrChunkKind, kindNames[k]))
	}
	return a
}()

// recorder follows one call: it parses the stream as the SDK reads it and
// writes the call's events and attributes on its span.
type recorder struct {
	cfg    *config
	ctx    context.Context
	span   trace.Span
	own    bool
	start  time.Time
	format format
	sse    bool   // parse the body
	keep   []byte // a non-streamed 2xx body, kept to read usage and finish reasons at its end
	keepOn bool
	failed string // why parsing stopped
	done   bool
	lined  bool // a line was read: the stream's BOM, if any, is behind
	status int

	limit   *firstTokenLimit // nil: no WithFirstTokenTimeout for this call
	release context.CancelCauseFunc

	facts

	// SSE parser state: a line cut across reads, the event being built.
	line      []byte
	lineLong  bool
	cr        bool
	data      []byte
	dataLong  bool
	hasData   bool
	eventName []byte

	// Chunk accounting.
	chunks, content, unrecorded int64
	eventsBefore, eventsAfter   int
	recorded                    int // ttft.chunk events written, at most cfg.maxEvents
	contentSeen, errorEvent     bool
	lastChunk                   time.Time
	maxGap                      time.Duration
}

// now is the time on the call's own timeline: its start plus the
// monotonic time since. Every event, the span's end and every gap are read
// on it, so a step of the wall clock mid-stream (an NTP correction) moves
// none of them against the span's start or against the gaps the summary
// measures (docs/architecture.md §11). The OTel SDK ends spans it times
// itself the same way.
func (r *recorder) now() time.Time {
	return r.start.Add(r.cfg.now().Sub(r.start))
}

func (r *recorder) headers(resp *http.Response, now time.Time) {
	r.status = resp.StatusCode
	r.span.AddEvent(EventHeaders, trace.WithTimestamp(now))
	r.span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
}

// feed parses p, which the SDK is about to get, as SSE. It never keeps p.
func (r *recorder) feed(p []byte, now time.Time) {
	defer func() {
		if v := recover(); v != nil {
			r.stop(fmt.Sprintf("internal error: %v", v))
		}
	}()
	for len(p) > 0 && r.failed == "" && !r.done {
		if r.cr {
			r.cr = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		end := bytes.IndexByte(p, '\n')
		lim := end
		if lim < 0 {
			lim = len(p)
		}
		skip := 1
		if cr := bytes.IndexByte(p[:lim], '\r'); cr >= 0 {
			end = cr
			if cr+1 < len(p) && p[cr+1] == '\n' {
				skip = 2
			} else if cr+1 == len(p) {
				r.cr = true
			}
		}
		if end < 0 {
			r.carry(p)
			return
		}
		line := p[:end]
		if len(r.line) > 0 || r.lineLong {
			r.carry(line)
			line = r.line
		}
		r.processLine(line, now)
		r.line, r.lineLong = r.line[:0], false
		p = p[end+skip:]
	}
}

func (r *recorder) carry(b []byte) {
	if room := maxLine - len(r.line); len(b) > room {
		b, r.lineLong = b[:room], true
	}
	r.line = append(r.line, b...)
}

func (r *recorder) processLine(line []byte, now time.Time) {
	if !r.lined {
		// The SSE decoder strips one UTF-8 byte order mark at the start.
		r.lined = true
		line = bytes.TrimPrefix(line, []byte("\uFEFF"))
	}
	if len(line) == 0 {
		r.dispatch(now)
		return
	}
	if line[0] == ':' {
		if !r.hasData && len(r.eventName) == 0 {
			r.chunk(kindKeepalive, now)
		}
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if r.hasData {
			r.appendData([]byte{'\n'})
		}
		r.appendData(value)
		r.hasData = true
		r.dataLong = r.dataLong || r.lineLong
	case "event":
		if len(value) > 256 {
			value = value[:256]
		}
		r.eventName = append(r.eventName[:0], value...)
	}
}

func (r *recorder) appendData(b []byte) {
	if room := maxLine - len(r.data); len(b) > room {
		b, r.dataLong = b[:room], true
	}
	r.data = append(r.data, b...)
}

// dispatch ends one SSE event at its blank line.
func (r *recorder) dispatch(now time.Time) {
	if r.hasData {
		k, ok := r.classify(r.format, r.eventName, r.data, r.dataLong)
		if !ok {
			r.stop("malformed " + formatNames[r.format] + " event")
		} else {
			r.chunk(k, now)
		}
	}
	r.data, r.dataLong, r.hasData = r.data[:0], false, false
	r.eventName = r.eventName[:0]
	if cap(r.data) > 64<<10 {
		r.data = nil // one large frame does not pin its buffer for the whole stream
	}
}

var formatNames = [...]string{
	formatNone:      "",
	formatChat:      "chat.completions",
	formatResponses: "responses",
	formatAnthropic: "messages",
	formatGemini:    "streamGenerateContent",
}

// chunk accounts one chunk and records its event when the bounds allow.
func (r *recorder) chunk(k kind, now time.Time) {
	r.chunks++
	record := false
	switch {
	case !r.contentSeen && k.stopsClock():
		r.contentSeen = true
		r.lastChunk = now
		record = true
		r.limit.stop()
	case !r.contentSeen:
		// Room stays for the first content and an error event.
		record = r.chunks == 1 || (r.eventsBefore < r.cfg.beforeContent && r.recorded < r.cfg.maxEvents-2)
		if record {
			r.eventsBefore++
		}
	default:
		if k != kindKeepalive { // a keep-alive does not end a pause
			if gap := now.Sub(r.lastChunk); gap > r.maxGap {
				r.maxGap = gap
			}
			if now.After(r.lastChunk) {
				r.lastChunk = now
			}
		}
		if (r.cfg.afterContent < 0 || r.eventsAfter < r.cfg.afterContent) && r.recorded < r.cfg.maxEvents-1 {
			record = true
			r.eventsAfter++
		}
	}
	if k.stopsClock() {
		r.content++
	}
	if k == kindError && !r.errorEvent {
		record, r.errorEvent = true, true
	}
	if record {
		r.recorded++
		r.span.AddEvent(EventChunk, trace.WithTimestamp(now), kindAttrs[k])
	} else {
		r.unrecorded++
	}
	if k == kindError {
		// An error event ends the stream in every format; an SDK may stop
		// reading there without closing the body, so the span ends now.
		r.end(endStreamErr, nil, now)
	}
}

// stop ends instrumentation of this stream; the app's reads go on.
func (r *recorder) stop(reason string) {
	r.limit.stop() // content can no longer be seen: the limit cannot be told
	if r.failed == "" {
		r.failed = reason
		r.line, r.data, r.eventName = nil, nil, nil
	}
}

// readEnd is called once the body's Read returned err.
func (r *recorder) readEnd(err error, now time.Time) {
	switch {
	case err == io.EOF && r.sse && r.marker:
		r.end(endCompleted, nil, now)
	case err == io.EOF:
		r.end(endEOF, nil, now)
	default:
		r.end(endError, err, now)
	}
}

// closeEnd is called when the app closes the body before a read error.
func (r *recorder) closeEnd(now time.Time) {
	switch {
	case r.ctx.Err() != nil && !r.marker:
		// The SDK closed the body because its context ended.
		r.end(endError, context.Cause(r.ctx), now)
	case !r.sse:
		r.end(endEOF, nil, now)
	case r.marker:
		r.end(endCompleted, nil, now)
	default:
		r.end(endClosed, nil, now)
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// end writes what the call ended with and ends the span if it is ours.
func (r *recorder) end(how string, err error, now time.Time) {
	if r.done {
		return
	}
	r.done = true
	r.limit.stop()
	if r.keepOn && len(r.keep) > 0 {
		r.classifyResponse(r.format, r.keep)
	}
	r.keep = nil
	if err != nil {
		switch {
		case errors.Is(err, ErrFirstTokenTimeout):
			how = endTimeout // before the check of the context, which the cut cancelled
		case errors.Is(err, context.Canceled) || errors.Is(r.ctx.Err(), context.Canceled):
			how, err = endCanceled, nil // the app walked away: outcome closed
		case isTimeout(err):
			how = endTimeout
		}
	}
	if how != endCanceled && r.errType != "" {
		how = endStreamErr
	}
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, attribute.String(AttrStreamEnd, how))
	if r.sse {
		if r.failed != "" {
			attrs = append(attrs, attribute.String(AttrInstrumentError, r.failed))
		} else {
			attrs = append(attrs,
				attribute.Int64(AttrChunkCount, r.chunks),
				attribute.Int64(AttrChunkContentCount, r.content),
				attribute.Int64(AttrChunkUnrecorded, r.unrecorded))
			if r.contentSeen {
				gap := r.maxGap
				if how == endTimeout && !errors.Is(err, context.DeadlineExceeded) && now.After(r.lastChunk) {
					// Cut by an idle timeout: the pause it was cut in is its
					// longest so far, the one the collector censors the idle
					// window at.
					gap = max(gap, now.Sub(r.lastChunk))
				}
				attrs = append(attrs, attribute.Float64(AttrChunkMaxGap, gap.Seconds()))
			}
		}
	}
	if r.model != "" {
		attrs = append(attrs, attribute.String("gen_ai.response.model", r.model))
	}
	if len(r.finish) > 0 {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", r.finish))
	}
	if r.hasInput {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.input_tokens", r.inputTokens))
	}
	if r.hasOutput {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.output_tokens", r.outputTokens))
	}
	if r.hasCacheRead {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.cache_read.input_tokens", r.cacheRead))
	}
	if r.hasCacheWrite {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.cache_creation.input_tokens", r.cacheWrite))
	}
	switch {
	case how == endStreamErr:
		attrs = append(attrs, attribute.String("error.type", r.errType))
		msg := r.errMsg
		if msg == "" {
			msg = r.errType
		}
		r.span.SetStatus(codes.Error, msg)
	case how == endTimeout:
		// Before any content it is a first-token timeout; after, a context
		// deadline is the caller's total deadline, a network timeout an idle one.
		typ := "timeout"
		if r.contentSeen && errors.Is(err, context.DeadlineExceeded) {
			typ = "deadline_exceeded"
		}
		attrs = append(attrs, attribute.String("error.type", typ))
		r.span.RecordError(err, trace.WithTimestamp(now))
		r.span.SetStatus(codes.Error, err.Error())
	case how == endError:
		attrs = append(attrs, attribute.String("error.type", fmt.Sprintf("%T", err)))
		r.span.RecordError(err, trace.WithTimestamp(now))
		r.span.SetStatus(codes.Error, err.Error())
	case r.status >= 400:
		attrs = append(attrs, attribute.String("error.type", strconv.Itoa(r.status)))
		r.span.SetStatus(codes.Error, http.StatusText(r.status))
	case how == endCompleted && len(r.finish) == 0:
		r.span.SetStatus(codes.Ok, "")
	}
	r.span.SetAttributes(attrs...)
	if r.own {
		r.span.End(trace.WithTimestamp(now))
	}
	r.line, r.data, r.eventName = nil, nil, nil
}

// body passes the response through unchanged and tells the recorder what
// went by. Close may come from another goroutine than Read (net/http allows
// it to abort a read), hence the mutex.
type body struct {
	rc io.ReadCloser
	mu sync.Mutex
	r  *recorder
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	err = b.r.cutErr(err)
	if n > 0 || err != nil {
		b.mu.Lock()
		if r := b.r; !r.done {
			now := r.now()
			if n > 0 && r.sse && r.failed == "" {
				r.feed(p[:n], now)
			} else if n > 0 && r.keepOn {
				if len(r.keep)+n > maxLine {
					r.keepOn, r.keep = false, nil // too large to read: no usage, no finish reason
				} else {
					r.keep = append(r.keep, p[:n]...)
				}
			}
			if err != nil {
				r.readEnd(err, now)
			}
		}
		if err != nil {
			b.r.requestDone()
		}
		b.mu.Unlock()
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.mu.Lock()
	if !b.r.done {
		b.r.closeEnd(b.r.now())
	}
	b.r.requestDone()
	b.mu.Unlock()
	return err
}
