package derive // import "github.com/otelcol-ttft/otelcol-ttft/internal/derive"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-ttft/otelcol-ttft/internal/record"
)

// Duration attributes of log records (they have no start and end).
const (
	attrTTFTDuration = "ttft.duration" // s
	attrDurationMs   = "duration_ms"
	attrLatencyMs    = "latency_ms"
)

// Logs derives one record per GenAI call log record, from attributes only
// (gateway request records, LiteLLM logs). Log records emitted inside a span
// (they carry a span id, e.g. GenAI events) are skipped with ReasonSpanLog:
// the span is the call. The observer is the gateway: a log record has no
// span kind to say it was written at the server.
func (d *Deriver) Logs(ld plog.Logs, visit func(res pcommon.Resource, lr plog.LogRecord, rec *record.Record)) Stats {
	return d.LogsWith(ld, LogVisitor{Record: visit})
}

// LogVisitor receives what Logs derives.
type LogVisitor struct {
	// Record is called once per request record; rec is only valid during
	// the call.
	Record func(res pcommon.Resource, lr plog.LogRecord, rec *record.Record)
	// Reread, when set, is called instead of Record for a record read back
	// from ttft.* attributes stamped upstream (and valid), not derived here.
	Reread func(res pcommon.Resource, lr plog.LogRecord, rec *record.Record)
}

func (v *LogVisitor) reread() func(pcommon.Resource, plog.LogRecord, *record.Record) {
	if v.Reread != nil {
		return v.Reread
	}
	return v.Record
}

// LogsWith is Logs with a visitor that tells read-back records apart.
func (d *Deriver) LogsWith(ld plog.Logs, v LogVisitor) Stats {
	var st Stats
	sc := d.acquire()
	defer d.release(sc)
	phase := d.samplePhase()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource()
		resNames := resourceNames(res)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			lrs := sl.LogRecords()
			if d.skipScope(sl.Scope(), lrs.Len(), &st) {
				continue
			}
			si := d.scopeInfo(sl.Scope(), &resNames)
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				st.Examined++
				// Without ttft.outcome or ttft.nested_in there is no record
				// to read back (Inspect would find StateNone).
				carries := record.Carries(lr.Attributes())
				if d.stampedOnly && !carries {
					st.Skipped[d.unstampedLog(sampled(st.Examined, phase), &si, lr)]++
					continue
				}
				if carries && readBackDone(d, lr.Attributes(), &sc.rec, &st, v.reread(), res, lr) {
					continue
				}
				if !lr.SpanID().IsEmpty() {
					st.Skipped[ReasonSpanLog]++
					continue
				}
				sc.entries = sc.entries[:0]
				e := sc.next()
				d.scanLog(&e.ev, &si, lr)
				st.Untrusted += e.ev.untrusted
				if !e.ev.isCall(false) {
					st.ValuesRejected += e.ev.rejected
					st.Skipped[ReasonNotGenAI]++
					continue
				}
				d.checkTimings(&e.ev)
				// After checkTimings, as for spans: its refusals (a TTFT
				// after the end, a duration, gap or attempts past their
				// bound) are counted too.
				st.ValuesRejected += e.ev.rejected
				e.root, e.parentIdx = 0, -1
				d.fold(sc)
				rec := &sc.rec
				*rec = record.Record{}
				reason, has := d.build(sc, 0, rec)
				if e.ev.duration == math.MaxFloat64 {
					rec.Duration, rec.HasDuration = 0, false
				}
				rec.Observer = record.ObserverGateway
				st.built(reason, has)
				if v.Record != nil {
					v.Record(res, lr, rec)
				}
			}
		}
	}
	return st
}

// unstampedLog is why a log record without a record is skipped under
// StampedOnly: span_log as without the option, else one in unstampedSample
// is scanned only to tell whether it is a call (ReasonUnstamped).
func (d *Deriver) unstampedLog(sample bool, si *scopeInfo, lr plog.LogRecord) Reason {
	if !lr.SpanID().IsEmpty() {
		return ReasonSpanLog
	}
	if sample {
		var ev evidence
		d.scanLog(&ev, si, lr)
		if ev.isCall(false) {
			return ReasonUnstamped
		}
	}
	return ReasonNotGenAI
}

func (d *Deriver) scanLog(e *evidence, si *scopeInfo, lr plog.LogRecord) {
	e.reset()
	e.gateway = true
	attrs := lr.Attributes()
	d.scanAttrs(e, si, attrs)
	if lr.SeverityNumber() >= plog.SeverityNumberError {
		e.status = ptrace.StatusCodeError
	} else if e.httpStatus >= 200 && e.httpStatus < 300 {
		// A gateway logs a request once it is over: a 2xx record completed.
		e.status = ptrace.StatusCodeOk
	}
	// No span times: the duration, if any, comes from an attribute; the
	// checks against it are skipped when it is unknown.
	e.timingValid = true
	e.duration = math.MaxFloat64
	for _, key := range [...]string{attrTTFTDuration, attrDurationMs, attrLatencyMs} {
		v, ok := attrs.Get(key)
		if !ok {
			continue
		}
		f, ok := number(v)
		if key != attrTTFTDuration {
			f /= 1e3
		}
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			e.rejected++
			continue
		}
		e.duration = f
		break
	}
	if e.chunkAtSrc != "" {
		// An absolute time (Langfuse's completion start) needs a start the
		// record does not have. It is never offered as a chunk time (only
		// a span's start resolves it), so it is told by chunkAtSrc, not by
		// its rank: a configured row of the same rank is read.
		e.chunkAt, e.chunkAtSrc = 0, ""
		e.rejected++
	}
}
