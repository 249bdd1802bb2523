'use strict';
// A fetch wrapper that records the ttft.chunk event contract of otelcol-ttft
// on an OpenTelemetry span for streamed LLM responses (OpenAI Chat
// Completions and Responses, Anthropic Messages, Gemini
// streamGenerateContent?alt=sse). The bytes the SDK reads are the bytes the
// server sent; every other request passes through untouched.

const api = require('@opentelemetry/api');
const { classify, classifyResponse, newFacts, stopsClock } = require('./lib/classify.cjs');
const { completeCut } = require('./lib/cutjson.cjs');

const SCOPE = '@otelcol-ttft/ttftstream';
const VERSION = '0.1.0';
const EVENT_CHUNK = 'ttft.chunk';
const EVENT_HEADERS = 'ttft.headers';
const ATTR = {
  kind: 'ttft.chunk.kind',
  count: 'ttft.chunk.count',
  contentCount: 'ttft.chunk.content_count',
  maxGap: 'ttft.chunk.max_gap',
  unrecorded: 'ttft.chunk.unrecorded',
  end: 'ttft.stream.end',
  instrumentError: 'ttft.instrumentation.error',
};
const DEFAULT_EVENTS_BEFORE_CONTENT = 100;
const DEFAULT_EVENTS_AFTER_CONTENT = 0;
const MAX_TIMEOUT_MS = 2147483647; // setTimeout's limit: a longer delay fires at once
const MAX_LINE = 1 << 20; // characters of one SSE line kept; longer lines are cut
const MAX_SNIFF = 1 << 20; // request body characters read for model and stream
const ACTIVE = api.createContextKey('otelcol-ttft instrumented request');

// MAX_CHUNK_EVENTS bounds the ttft.chunk events of one call whatever the
// options say: the OpenTelemetry SDKs keep 128 events a span and drop the
// oldest past that, the first content with them, and the derivation then
// reads no time from the events at all.
const MAX_CHUNK_EVENTS = 120;

// chunkEventBound is the most ttft.chunk events a call records under the
// SDK's OTEL_SPAN_EVENT_COUNT_LIMIT (the value given): MAX_CHUNK_EVENTS, or,
// where the SDK keeps fewer than 128 events a span, 8 under its limit as
// 120 is under 128 (room for other libraries' events on the span), never
// under 2 (the first chunk and the first content). A value that is no
// integer, negative (no limit) or 128 and over leaves MAX_CHUNK_EVENTS.
function chunkEventBound(env) {
  if (typeof env !== 'string' || !/^\s*-?\d+\s*$/.test(env)) return MAX_CHUNK_EVENTS;
  const n = Number(env);
  if (n < 0 || n >= 128) return MAX_CHUNK_EVENTS;
  return Math.max(n - 8, 2);
}

// callClock returns the call's own timeline, a high-resolution time the
// OTel API accepts as TimeInput: the wall clock read once when the call
// starts, plus the monotonic time since. performance.timeOrigin would do
// for the second part, but it was fixed when the process started; a step
// of the wall clock since (an NTP correction) or a suspend would put the
// events off the spans the SDK starts on Date.now().
function callClock() {
  const wall0 = Date.now();
  const mono0 = performance.now();
  return () => wall0 + (performance.now() - mono0);
}

function classifyRequest(method, url) {
  if ((method || 'GET').toUpperCase() !== 'POST') return undefined;
  const p = url.pathname;
  if (p.endsWith('/chat/completions')) return { format: 'chat', operation: 'chat', provider: 'openai' };
  if (p.endsWith('/completions')) return { format: 'chat', operation: 'text_completion', provider: 'openai' };
  if (p.endsWith('/responses')) return { format: 'responses', operation: 'chat', provider: 'openai' };
  // Not OpenAI Assistants' POST /threads/{id}/messages, which adds a message
  // to a thread and calls no model.
  if (p.endsWith('/messages') && !p.includes('/threads/')) return { format: 'anthropic', operation: 'chat', provider: 'anthropic' };
  const i = p.lastIndexOf(':');
  if (i > 0) {
    const m = p.slice(i + 1);
    const j = p.lastIndexOf('/models/', i);
    const model = j >= 0 ? decodeURIComponent(p.slice(j + 8, i)) : undefined;
    if (m === 'streamGenerateContent' || m === 'generateContent') {
      return { format: 'gemini', operation: 'generate_content', provider: 'gcp.gemini', model, stream: m === 'streamGenerateContent' };
    }
    // Claude on Vertex AI: the Anthropic Messages API, and its stream, under a
    // Vertex publisher path (the Anthropic SDKs' Vertex clients); other
    // publishers' raw predictions are no Messages API.
    if ((m === 'streamRawPredict' || m === 'rawPredict') && p.slice(0, i).includes('/publishers/anthropic/models/')) {
      return { format: 'anthropic', operation: 'chat', provider: 'gcp.vertex_ai', model, stream: m === 'streamRawPredict' };
    }
  }
  return undefined;
}

// sniff reads "model" and "stream" from a string or byte body; other bodies
// (streams, FormData) are not read.
function sniff(body) {
  let text;
  if (typeof body === 'string') text = body;
  else if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
    if (body.byteLength <= MAX_SNIFF) text = new TextDecoder().decode(body);
  }
  if (text === undefined || text.length > MAX_SNIFF) return {};
  try {
    const o = JSON.parse(text);
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return {};
    // The APIs stream only when asked: a readable body without "stream" is not streamed.
    return { model: typeof o.model === 'string' && o.model.length <= 256 ? o.model : undefined, stream: o.stream === true, streamKnown: true };
  } catch {
    return {};
  }
}

// callerSpan is the active span when it is a recording GenAI CLIENT or
// INTERNAL span the caller started for this call.
function callerSpan(ctx) {
  const sp = api.trace.getSpan(ctx);
  if (!sp || !sp.isRecording()) return undefined;
  const attrs = sp.attributes;
  if (!attrs || (sp.kind !== api.SpanKind.CLIENT && sp.kind !== api.SpanKind.INTERNAL)) return undefined;
  if (attrs['gen_ai.operation.name'] || attrs['gen_ai.provider.name'] || attrs['gen_ai.system']) return sp;
  return undefined;
}

function isSSE(ct) {
  return typeof ct === 'string' && ct.trim().toLowerCase().startsWith('text/event-stream');
}

// Recorder follows one call.
class Recorder {
  constructor(cfg, span, own, format, signal, clock) {
    this.cfg = cfg;
    this.now = clock;
    this.unlink = () => {}; // removes the listener on the caller's signal
    this.detach = () => {}; // drops the listener's hold on this recorder
    this.ownCut = false; // the wrapper's own limit ended the call
    this.span = span;
    this.own = own;
    this.format = format;
    this.signal = signal;
    this.facts = newFacts();
    this.sse = false;
    this.failed = undefined;
    this.done = false;
    this.status = 0;
    this.keep = undefined; // a non-streamed 2xx JSON body, read at its end
    // SSE parser state.
    this.decoder = new TextDecoder();
    this.line = '';
    this.lineLong = false;
    this.cr = false;
    this.data = '';
    this.hasData = false;
    this.event = '';
    // Chunk accounting.
    this.chunks = 0;
    this.content = 0;
    this.unrecorded = 0;
    this.eventsBefore = 0;
    this.eventsAfter = 0;
    this.recorded = 0; // ttft.chunk events written, at most cfg.maxEvents
    this.contentSeen = false;
    this.errorEvent = false;
    this.lastChunk = 0;
    this.maxGap = 0;
    // Wrapper-side timeouts (firstTokenTimeoutMs, idleTimeoutMs): one timer
    // at a time, checked lazily (a chunk moves the deadline, not the timer).
    this.limited = false; // the call has a wrapper-side timeout that may still apply
    this.phase = undefined; // 'first_token' | 'idle': the limit running now
    this.deadline = 0;
    this.timer = undefined;
    this.waiting = true; // the SDK waits on the wrapper: before headers, or a read is pending
    this.moved = false; // the last read carried a non-keep-alive chunk after content
    this.cutters = []; // what a cut aborts: the fetch, the body
  }

  // arm starts the limit of phase, due at deadline.
  arm(phase, deadline) {
    this.limited = true;
    this.phase = phase;
    this.deadline = deadline;
    this.schedule(deadline - this.now());
  }

  schedule(ms) {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(), Math.max(0, Math.ceil(ms)));
  }

  // disarm clears the timer: on first content (without an idle limit), at
  // the end, on a parse failure (content can no longer be seen), on the
  // caller's abort.
  disarm() {
    this.limited = false;
    this.phase = undefined;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  // check runs when the timer fires. A limit cuts only while the SDK waits
  // on the wrapper: time the app holds a chunk is the app's, not the
  // server's; the deadline is checked again when the SDK reads next.
  check() {
    this.timer = undefined;
    if (this.done || !this.phase) return;
    const t = this.now();
    if (this.deadline > t) return this.schedule(this.deadline - t);
    if (!this.waiting) return;
    if (this.signal && this.signal.aborted) return this.disarm(); // the caller's abort wins
    const ms = this.phase === 'first_token' ? this.cfg.firstTokenTimeoutMs : this.cfg.idleTimeoutMs;
    const err = new DOMException(this.phase === 'first_token'
      ? `first token timeout: no content within ${ms} ms (firstTokenTimeoutMs)`
      : `idle timeout: no chunk for ${ms} ms after content (idleTimeoutMs)`, 'TimeoutError');
    this.ownCut = true;
    this.end('timeout', err, t);
    for (const cut of this.cutters) cut(err);
    this.cutters = [];
  }

  // readStart: the SDK asks for the next bytes.
  readStart() {
    this.waiting = true;
    if (!this.phase) return;
    if (this.phase === 'idle' && this.moved) {
      // The pause starts at the later of the last chunk and this read.
      this.moved = false;
      this.deadline = Math.max(this.lastChunk, this.now()) + this.cfg.idleTimeoutMs;
    }
    if (this.timer === undefined) this.schedule(this.deadline - this.now());
  }

  headers(resp, t) {
    this.status = resp.status;
    this.span.addEvent(EVENT_HEADERS, t);
    this.span.setAttribute('http.response.status_code', resp.status);
  }

  // feed parses bytes the SDK is about to get; it never changes them.
  feed(bytes, t) {
    try {
      this.feedText(this.decoder.decode(bytes, { stream: true }), t);
    } catch (e) {
      this.stop(`internal error: ${e && e.message}`);
    }
  }

  feedText(s, t) {
    let i = 0;
    while (i < s.length && !this.failed && !this.done) {
      if (this.cr) {
        this.cr = false;
        if (s.charCodeAt(i) === 10) {
          i++;
          continue;
        }
      }
      let j = i;
      while (j < s.length) {
        const c = s.charCodeAt(j);
        if (c === 10 || c === 13) break;
        j++;
      }
      if (j === s.length) {
        this.carry(s.slice(i));
        return;
      }
      let line = s.slice(i, j);
      if (this.line || this.lineLong) {
        this.carry(line);
        line = this.line;
      }
      this.processLine(line, t);
      this.line = '';
      this.lineLong = false;
      if (s.charCodeAt(j) === 13) {
        if (j + 1 < s.length) {
          if (s.charCodeAt(j + 1) === 10) j++;
        } else {
          this.cr = true;
        }
      }
      i = j + 1;
    }
  }

  carry(s) {
    const room = MAX_LINE - this.line.length;
    if (s.length > room) {
      s = s.slice(0, room);
      this.lineLong = true;
    }
    this.line += s;
  }

  processLine(line, t) {
    if (line === '') return this.dispatch(t);
    if (line.charCodeAt(0) === 58 /* : */) {
      if (!this.hasData && !this.event) this.chunk('keepalive', t);
      return;
    }
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? '' : line.slice(i + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.data = this.hasData ? this.data + '\n' + value : value;
      if (this.data.length > MAX_LINE) {
        this.data = this.data.slice(0, MAX_LINE);
        this.dataLong = true;
      }
      this.dataLong = this.dataLong || this.lineLong;
      this.hasData = true;
    } else if (field === 'event') {
      this.event = value.slice(0, 256);
    }
  }

  dispatch(t) {
    if (this.hasData) {
      let k;
      try {
        k = classify(this.facts, this.format, this.event, this.data);
      } catch {
        k = undefined;
      }
      if (k === undefined && this.dataLong) {
        // Cut at the line limit: read as far as it goes (lib/cutjson.cjs).
        const whole = completeCut(this.data);
        try {
          k = whole === undefined ? undefined : classify(this.facts, this.format, this.event, whole);
        } catch {
          k = undefined;
        }
      }
      if (k === undefined) {
        this.stop(this.dataLong ? `${this.format} event longer than ${MAX_LINE} characters` : `malformed ${this.format} event`);
      } else {
        this.chunk(k, t);
      }
    }
    this.data = '';
    this.dataLong = false;
    this.hasData = false;
    this.event = '';
  }

  chunk(k, t) {
    this.chunks++;
    let record = false;
    if (!this.contentSeen && stopsClock(k)) {
      this.contentSeen = true;
      this.lastChunk = t;
      record = true;
      if (this.limited) {
        if (this.cfg.idleTimeoutMs !== undefined) {
          // The idle limit from here on; the timer starts at the next read
          // (the first-token one may be due later than this deadline).
          if (this.timer !== undefined) clearTimeout(this.timer);
          this.timer = undefined;
          this.phase = 'idle';
          this.deadline = t + this.cfg.idleTimeoutMs;
          this.moved = true;
        } else {
          this.disarm();
        }
      }
    } else if (!this.contentSeen) {
      // Room stays for the first content and an error event.
      record = this.chunks === 1 || (this.eventsBefore < this.cfg.eventsBeforeContent && this.recorded < this.cfg.maxEvents - 2);
      if (record) this.eventsBefore++;
    } else {
      if (k !== 'keepalive') { // a keep-alive does not end a pause
        if (t - this.lastChunk > this.maxGap) this.maxGap = t - this.lastChunk;
        if (t > this.lastChunk) this.lastChunk = t;
        if (this.phase === 'idle') this.moved = true;
      }
      if ((this.cfg.eventsAfterContent < 0 || this.eventsAfter < this.cfg.eventsAfterContent) && this.recorded < this.cfg.maxEvents - 1) {
        record = true;
        this.eventsAfter++;
      }
    }
    if (stopsClock(k)) this.content++;
    if (k === 'error' && !this.errorEvent) {
      record = true;
      this.errorEvent = true;
    }
    if (record) {
      this.recorded++;
      this.span.addEvent(EVENT_CHUNK, { [ATTR.kind]: k }, t);
    } else this.unrecorded++;
    // An error event ends the stream in every format; some SDKs then stop
    // reading without cancelling the body, so the span ends here.
    if (k === 'error') this.end('stream_error', undefined, t);
  }

  stop(reason) {
    this.disarm(); // no content can be seen any more: no limit can be told
    if (!this.failed) {
      this.failed = reason;
      this.line = this.data = this.event = '';
    }
  }

  keepBytes(bytes) {
    if (this.keep === undefined) return;
    this.keep.push(bytes);
    this.keepLen += bytes.byteLength;
    if (this.keepLen > MAX_SNIFF) this.keep = undefined; // too large to read: no usage, no finish reason
  }

  // end writes what the call ended with; how: completed | eof | closed |
  // canceled | timeout | error | stream_error.
  // callersDeadline says a timeout is the caller's own (its signal fired
  // with a TimeoutError), not the wrapper's limits nor the network's.
  callersDeadline() {
    return !this.ownCut && callerTimedOut(this.signal);
  }

  end(how, err, t) {
    if (this.done) return;
    this.done = true;
    this.disarm();
    // An error event ends the call while the body may stay open (the
    // server holding the connection): the caller's abort must still reach
    // a read, so the listener stays, without this recorder; the body's
    // end, error or cancel removes it. Every other end is the body's own.
    if (how === 'stream_error') this.detach();
    else this.unlink();
    const f = this.facts;
    if (this.keep && this.keep.length) {
      const buf = new Uint8Array(this.keepLen);
      let off = 0;
      for (const b of this.keep) {
        buf.set(b, off);
        off += b.byteLength;
      }
      classifyResponse(f, this.format, new TextDecoder().decode(buf));
    }
    this.keep = undefined;
    if (err !== undefined) {
      if (isTimeout(err, this.signal)) how = 'timeout';
      else if (isAbort(err, this.signal)) how = 'canceled';
    }
    if (how !== 'canceled' && f.errType !== undefined) how = 'stream_error';
    const a = { [ATTR.end]: how };
    if (this.sse) {
      if (this.failed) a[ATTR.instrumentError] = this.failed;
      else {
        a[ATTR.count] = this.chunks;
        a[ATTR.contentCount] = this.content;
        a[ATTR.unrecorded] = this.unrecorded;
        if (this.contentSeen) {
          // Cut by an idle timeout (not the caller's deadline): the pause it
          // was cut in is its longest so far, the one the collector censors
          // the idle window at.
          const idleCut = how === 'timeout' && !this.callersDeadline() && t > this.lastChunk;
          a[ATTR.maxGap] = (idleCut ? Math.max(this.maxGap, t - this.lastChunk) : this.maxGap) / 1e3;
        }
      }
    }
    if (f.model) a['gen_ai.response.model'] = f.model;
    if (f.finish.length) a['gen_ai.response.finish_reasons'] = f.finish;
    if (f.input !== undefined) a['gen_ai.usage.input_tokens'] = f.input;
    if (f.output !== undefined) a['gen_ai.usage.output_tokens'] = f.output;
    if (f.cacheRead !== undefined) a['gen_ai.usage.cache_read.input_tokens'] = f.cacheRead;
    if (f.cacheWrite !== undefined) a['gen_ai.usage.cache_creation.input_tokens'] = f.cacheWrite;
    const msg = (e) => (e && e.message) || String(e);
    if (how === 'stream_error') {
      a['error.type'] = f.errType;
      this.span.setStatus({ code: api.SpanStatusCode.ERROR, message: f.errMsg || f.errType });
    } else if (how === 'timeout') {
      // Before any content it is a first-token timeout; after, the
      // caller's own deadline (its signal's TimeoutError) is its total
      // deadline, anything else (the wrapper's idle limit, a network
      // timeout) an idle one.
      a['error.type'] = this.contentSeen && this.callersDeadline() ? 'deadline_exceeded' : 'timeout';
      // By name: the OTel SDK would write a DOMException's legacy code (23)
      // as exception.type.
      this.span.recordException(err && typeof err === 'object' ? { name: err.name, message: err.message, stack: err.stack } : err, t);
      this.span.setStatus({ code: api.SpanStatusCode.ERROR, message: msg(err) });
    } else if (how === 'error') {
      a['error.type'] = (err && err.name) || 'Error';
      this.span.recordException(err, t);
      this.span.setStatus({ code: api.SpanStatusCode.ERROR, message: msg(err) });
    } else if (this.status >= 400) {
      a['error.type'] = String(this.status);
      this.span.setStatus({ code: api.SpanStatusCode.ERROR });
    } else if (how === 'completed' && f.finish.length === 0) {
      this.span.setStatus({ code: api.SpanStatusCode.OK });
    }
    this.span.setAttributes(a);
    if (this.own) this.span.end(t);
  }
}

function reasonOf(signal) {
  return signal && signal.aborted ? signal.reason : undefined;
}

// timeoutNamed says an error or abort reason is named as a timeout.
function timeoutNamed(e) {
  return !!(e && (e.name === 'TimeoutError' || /timeout|timed out/i.test(e.name || '')));
}

function isTimeout(err, signal) {
  return [err, reasonOf(signal), err && err.cause].some(timeoutNamed);
}

// callerTimedOut says the caller's signal fired with a timeout
// (AbortSignal.timeout, or any reason named TimeoutError).
function callerTimedOut(signal) {
  return timeoutNamed(reasonOf(signal));
}

function isAbort(err, signal) {
  return (err && err.name === 'AbortError') || (signal !== undefined && signal !== null && signal.aborted);
}

// wrapBody returns a stream that hands the SDK exactly the chunks of body,
// one per read it asks for (back-pressure and cancel pass through), while
// the recorder looks at them. A wrapper-side timeout errors it (the SDK gets
// the TimeoutError from its pending read; what it read before is unchanged)
// and cancels the body underneath.
function wrapBody(body, r, unlink) {
  const reader = body.getReader();
  let cut = false;
  // abandon ends the call when the app stops reading before the end: it
  // cancelled the body, or released its reader and took no other.
  const abandon = (t, reason) => {
    unlink();
    if (r.signal && r.signal.aborted && !r.facts.marker) r.end('error', reasonOf(r.signal) || reason, t);
    else r.end(!r.sse ? 'eof' : r.facts.marker ? 'completed' : 'closed', undefined, t);
  };
  const stream = new ReadableStream({
    start(controller) {
      if (r.limited) {
        r.cutters.push((err) => {
          cut = true;
          unlink();
          controller.error(err);
          reader.cancel(err).catch(() => {});
        });
      }
    },
    async pull(controller) {
      r.readStart();
      let res;
      try {
        res = await reader.read();
      } catch (err) {
        if (cut) return;
        unlink();
        r.end('error', err, r.now());
        controller.error(err);
        return;
      }
      if (cut) return;
      r.waiting = false;
      const t = r.now();
      if (res.done) {
        unlink();
        r.end(r.sse && r.facts.marker ? 'completed' : 'eof', undefined, t);
        controller.close();
        return;
      }
      if (!r.done) {
        if (r.sse && !r.failed) r.feed(res.value, t);
        else if (r.keep) r.keepBytes(res.value);
      }
      controller.enqueue(res.value);
    },
    cancel(reason) {
      abandon(r.now(), reason);
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  // Some SDKs (@google/genai) leave a stream the app stops iterating
  // (break in for await) by releasing their reader, without a cancel: no
  // read or cancel would ever end the span. A reader released before the
  // end, with no other reader taken in the same turn, is the app closing
  // the body (no timer: a microtask).
  const getReader = stream.getReader;
  stream.getReader = function (...args) {
    const rd = getReader.apply(this, args);
    const releaseLock = rd.releaseLock;
    rd.releaseLock = function () {
      releaseLock.call(this);
      if (r.done) return;
      const t = r.now();
      queueMicrotask(() => {
        if (!r.done && !stream.locked) abandon(t);
      });
    };
    return rd;
  };
  return stream;
}

// timeoutOption reads a wrapper-side timeout: undefined (none) or a whole
// or fractional number of milliseconds in (0, 2147483647].
function timeoutOption(options, name) {
  const v = options[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !(v > 0) || v > MAX_TIMEOUT_MS) {
    throw new RangeError(`instrumentFetch: ${name} must be a number of milliseconds > 0 and <= ${MAX_TIMEOUT_MS}, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
  }
  return v;
}

// linkSignal returns a signal for the wrapped fetch that aborts with the
// caller's signal (same reason) and with a wrapper-side timeout, and a
// function that removes the listener from the caller's signal.
function linkSignal(callerSignal, r) {
  const ac = new AbortController();
  let unlink = () => {};
  let rec = r;
  if (callerSignal) {
    if (callerSignal.aborted) {
      ac.abort(callerSignal.reason);
    } else {
      const onAbort = () => {
        if (rec) rec.disarm(); // the caller's abort wins over a timeout due later
        ac.abort(callerSignal.reason);
      };
      callerSignal.addEventListener('abort', onAbort, { once: true });
      unlink = () => callerSignal.removeEventListener('abort', onAbort);
    }
  }
  r.cutters.push((err) => {
    unlink();
    ac.abort(err);
  });
  return { signal: ac.signal, unlink: () => unlink(), detach: () => { rec = undefined; } };
}

// instrumentFetch returns a fetch that instruments LLM requests.
function instrumentFetch(options = {}) {
  const base = options.fetch || globalThis.fetch;
  if (typeof base !== 'function') throw new TypeError('instrumentFetch: no fetch to wrap');
  const tracer = (options.tracerProvider || api.trace.getTracerProvider()).getTracer(SCOPE, VERSION);
  const cfg = {
    eventsBeforeContent: options.eventsBeforeContent >= 0 ? options.eventsBeforeContent : DEFAULT_EVENTS_BEFORE_CONTENT,
    eventsAfterContent: typeof options.eventsAfterContent === 'number' ? options.eventsAfterContent : DEFAULT_EVENTS_AFTER_CONTENT,
    firstTokenTimeoutMs: timeoutOption(options, 'firstTokenTimeoutMs'),
    idleTimeoutMs: timeoutOption(options, 'idleTimeoutMs'),
    // read when the fetch is wrapped, as the SDK reads it when built
    maxEvents: chunkEventBound(typeof process !== 'undefined' && process.env ? process.env.OTEL_SPAN_EVENT_COUNT_LIMIT : undefined),
  };
  const limits = cfg.firstTokenTimeoutMs !== undefined || cfg.idleTimeoutMs !== undefined;
  const extra = options.attributes || {};

  return async function ttftFetch(input, init) {
    const isReq = typeof Request !== 'undefined' && input instanceof Request;
    let url;
    try {
      url = new URL(isReq ? input.url : String(input));
    } catch {
      return base(input, init);
    }
    const ep = classifyRequest((init && init.method) || (isReq ? input.method : 'GET'), url);
    const parent = api.context.active();
    if (!ep || parent.getValue(ACTIVE)) return base(input, init);

    const clock = callClock();
    const start = clock();
    const s = sniff(init && init.body);
    const model = s.model || ep.model;
    let stream = s.stream;
    let streamKnown = s.streamKnown;
    if (ep.stream) stream = streamKnown = true;
    let ctx = parent.setValue(ACTIVE, true);
    let span = callerSpan(parent);
    const own = !span;
    if (span) {
      if (streamKnown) span.setAttribute('gen_ai.request.stream', stream);
    } else {
      const attributes = {
        'gen_ai.operation.name': ep.operation,
        'gen_ai.provider.name': options.provider || ep.provider,
        ...(model ? { 'gen_ai.request.model': model } : {}),
        ...(streamKnown ? { 'gen_ai.request.stream': stream } : {}),
        'server.address': url.hostname,
        ...(url.port ? { 'server.port': Number(url.port) } : {}),
        ...extra,
      };
      span = tracer.startSpan(model ? `${ep.operation} ${model}` : ep.operation,
        { kind: api.SpanKind.CLIENT, startTime: start, attributes }, parent);
      ctx = api.trace.setSpan(ctx, span);
    }
    // A call known not to stream has no first token to wait for.
    const limited = limits && !(streamKnown && !stream);
    if (!span.isRecording() && !limited) {
      // Sampled out: nothing would be kept, so nothing is parsed (unless a
      // timeout must see the first content of a stream).
      if (own) span.end();
      return api.context.with(ctx, () => base(input, init));
    }
    const signal = (init && init.signal) || (isReq ? input.signal : undefined);
    const r = new Recorder(cfg, span, own, ep.format, signal, clock);
    let unlink = () => {};
    let call = init;
    if (limited) {
      if (cfg.firstTokenTimeoutMs !== undefined) r.arm('first_token', start + cfg.firstTokenTimeoutMs);
      else r.limited = true; // the idle limit starts at the first content
      const link = linkSignal(signal, r);
      unlink = r.unlink = link.unlink;
      r.detach = link.detach;
      call = { ...init, signal: link.signal };
    }
    let resp;
    try {
      const pending = api.context.with(ctx, () => base(input, call));
      resp = await (r.phase !== 'first_token' ? pending : new Promise((resolve, reject) => {
        // Before the headers a cut rejects at once, whatever the wrapped
        // fetch does with the aborted signal; a response that comes anyway
        // is cancelled.
        let cut = false;
        r.cutters.push((err) => {
          cut = true;
          reject(err);
        });
        pending.then((v) => {
          if (!cut) resolve(v);
          else if (v && v.body) v.body.cancel().catch(() => {});
        }, reject);
      }));
    } catch (err) {
      unlink();
      r.end('error', err, clock());
      throw err;
    }
    const t = clock();
    r.headers(resp, t);
    r.waiting = false;
    if (!resp.body) {
      unlink();
      r.end('eof', undefined, t);
      return resp;
    }
    if (resp.status < 400) {
      const ct = resp.headers.get('content-type');
      if (isSSE(ct)) r.sse = true;
      else if (ct && ct.toLowerCase().includes('json')) {
        r.keep = [];
        r.keepLen = 0;
      }
    }
    if (!r.sse) r.disarm(); // an error or a non-streamed body: no first token to wait for
    const out = new Response(wrapBody(resp.body, r, unlink), { status: resp.status, statusText: resp.statusText, headers: resp.headers });
    for (const k of ['url', 'redirected', 'type']) {
      Object.defineProperty(out, k, { value: resp[k], enumerable: true });
    }
    return out;
  };
}

module.exports = {
  instrumentFetch,
  EVENT_CHUNK,
  EVENT_HEADERS,
  ATTR,
  DEFAULT_EVENTS_BEFORE_CONTENT,
  DEFAULT_EVENTS_AFTER_CONTENT,
  MAX_CHUNK_EVENTS,
  SCOPE,
  VERSION,
};
