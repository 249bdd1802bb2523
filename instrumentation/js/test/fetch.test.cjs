'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const api = require('@opentelemetry/api');
const { instrumentFetch, EVENT_CHUNK, ATTR, DEFAULT_EVENTS_BEFORE_CONTENT, MAX_CHUNK_EVENTS } = require('../index.cjs');
const { classify, newFacts } = require('../lib/classify.cjs');
const { tracerProvider } = require('./otel.cjs');
const { BasicTracerProvider, AlwaysOffSampler } = require('@opentelemetry/sdk-trace-base');

const { provider, memory } = tracerProvider();
const enc = new TextEncoder();
const sse = (...frames) => frames.map((f) => (f.startsWith(':') ? `${f}\n\n` : `data: ${f}\n\n`)).join('');
const content = (s) => JSON.stringify({ choices: [{ index: 0, delta: { content: s }, finish_reason: null }] });
const ROLE = JSON.stringify({ model: 'gpt-4.1', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
const FINISH = JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
const USAGE = JSON.stringify({ choices: [], usage: { prompt_tokens: 1500, completion_tokens: 3 } });

// fakeFetch answers with body cut into pieces of at most `split` bytes.
function fakeFetch(body, { status = 200, type = 'text/event-stream', split = 0, error } = {}) {
  return async () => {
    const bytes = enc.encode(body);
    let off = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (off >= bytes.length) {
          if (error) c.error(error);
          else c.close();
          return;
        }
        const n = split > 0 ? split : bytes.length;
        c.enqueue(bytes.slice(off, off + n));
        off += n;
      },
    });
    return new Response(stream, { status, headers: { 'content-type': type } });
  };
}

async function call(body, opts = {}) {
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: fakeFetch(body, opts), ...(opts.options || {}) });
  const resp = await f(opts.url || 'http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: opts.reqBody || '{"model":"gpt-4.1","stream":true}' });
  let text;
  let err;
  try {
    text = await resp.text();
  } catch (e) {
    err = e;
  }
  const spans = memory.getFinishedSpans();
  return { text, err, span: spans[0], spans, resp };
}
const kinds = (span) => span.events.filter((e) => e.name === EVENT_CHUNK).map((e) => e.attributes[ATTR.kind]);

test('kinds per format', () => {
  const cases = [
    ['chat', '', ROLE, 'role'],
    ['chat', '', content('x'), 'content'],
    ['chat', '', '{"choices":[{"index":0,"delta":{"audio":{"id":"audio_1","transcript":"Hi"}}}]}', 'content'],
    ['chat', '', '{"choices":[{"index":0,"delta":{"audio":{"id":"audio_1","expires_at":1729018505}}}]}', 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { reasoning_content: 'x' } }] }), 'reasoning'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '' } }] } }] }), 'tool_call'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] } }] }), 'tool_call'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function' }] } }] }), 'tool_call'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0 }, { index: 1, function: { name: 'g' } }] } }] }), 'tool_call'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { function_call: { arguments: '{}' } } }] }), 'tool_call'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0 }] } }] }), 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'The user is asking' }] }] } }] }), 'reasoning'],
    ['chat', '', JSON.stringify({ choices: [{ index: 0, delta: { content: [{ type: 'text', text: '2 + 2 = 4' }] } }] }), 'content'],
    ['chat', '', JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: [{ type: 'text', text: '' }] } }] }), 'role'],
    ['chat', '', JSON.stringify({ choices: [{ index: 0, delta: { content: [{ type: 'thinking', thinking: [], closed: true }] } }] }), 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: [] } }] }), 'role'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{}] } }] }), 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, id: '', type: 'function', function: { name: '', arguments: '' } }] } }] }), 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, function: null }] } }] }), 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { function_call: { arguments: '' } } }] }), 'lifecycle'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { role: 'assistant', tool_calls: [{ index: 0 }] } }] }), 'role'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { role: 'assistant' } }, { delta: { content: 'b' } }] }), 'content'],
    ['chat', '', FINISH, 'lifecycle'],
    ['chat', '', USAGE, 'lifecycle'],
    ['chat', '', '[DONE]', 'lifecycle'],
    ['chat', '', '{"error":{"message":"x","type":"server_error"}}', 'error'],
    ['responses', '', '{"type":"response.created","response":{"status":"in_progress"}}', 'lifecycle'],
    ['responses', '', '{"type":"response.output_text.delta","delta":"Hi"}', 'content'],
    ['responses', '', '{"type":"response.reasoning_summary_text.delta","delta":"h"}', 'reasoning'],
    ['responses', '', '{"type":"response.function_call_arguments.delta","delta":"{"}', 'tool_call'],
    ['responses', '', '{"type":"response.output_text.done"}', 'lifecycle'],
    ['responses', '', '{"type":"response.output_item.added","item":{"type":"function_call","name":"get_weather","arguments":""}}', 'tool_call'],
    ['responses', '', '{"type":"response.output_item.added","item":{"type":"message","content":[]}}', 'lifecycle'],
    ['responses', '', '{"type":"response.output_item.added","output_index":2,"item":{"type":"mcp_approval_request","name":"create_short_url","arguments":"{\\"url\\":\\"x\\"}","server_label":"zip1"}}', 'tool_call'],
    ['responses', '', '{"type":"response.output_item.added","output_index":0,"item":{"type":"mcp_list_tools","server_label":"zip1","tools":[]}}', 'lifecycle'],
    ['responses', '', '[DONE]', 'lifecycle'],
    ['responses', '', '{"type":"error","code":"c","message":"m"}', 'error'],
    ['responses', '', '{"type":"response.failed","response":{"status":"failed"}}', 'error'],
    ['anthropic', 'ping', '{"type": "ping"}', 'keepalive'],
    ['anthropic', '', '{"type":"message_start","message":{}}', 'lifecycle'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}', 'content'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"x"}}', 'reasoning'],
    ['anthropic', '', '{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}', 'reasoning'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}}],"role":"model"}}]}', 'content'],
    ['responses', '', '{"type":"response.image_generation_call.partial_image","output_index":0,"partial_image_index":0,"partial_image_b64":"iVBOR"}', 'content'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{\\"a"}}', 'tool_call'],
    // An empty delta carries nothing.
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":""}}', 'lifecycle'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"text_delta","text":""}}', 'lifecycle'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":""}}', 'lifecycle'],
    // A tool call starts with the block that names the tool (the fixtures'
    // ground truth: first content at tool_block_start).
    ['anthropic', '', '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"get_weather","input":{}}}', 'tool_call'],
    ['anthropic', '', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}', 'lifecycle'],
    ['anthropic', '', '[DONE]', 'lifecycle'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"signature_delta","signature":"x"}}', 'lifecycle'],
    ['anthropic', 'error', '{"type":"error","error":{"type":"overloaded_error"}}', 'error'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}', 'content'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"text":"x","thought":true}]}}]}', 'reasoning'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}]}', 'tool_call'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}', 'lifecycle'],
    // A block may start with its first text (the SDKs keep it: the
    // accumulated message begins with it); Anthropic-format gateways send it.
    ['anthropic', '', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hello","citations":null}}', 'content'],
    ['anthropic', '', '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"Let me see","signature":""}}', 'reasoning'],
    // Gemini server-side tool invocations (include_server_side_tool_invocations):
    // the model's call of a built-in tool is a toolCall part, its result a toolResponse part.
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"toolCall":{"id":"tc_1","toolType":"GOOGLE_SEARCH_WEB","args":{"queries":["northernmost city in the US"]}}}],"role":"model"}}]}', 'tool_call'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"toolResponse":{"id":"tc_1","toolType":"GOOGLE_SEARCH_WEB","response":{"results":[]}}}],"role":"model"}}]}', 'lifecycle'],
    // A hosted shell command's stdout/stderr is the tool's output, not the model's.
    ['responses', '', '{"type":"response.shell_call_command.delta","output_index":0,"command_index":0,"delta":"ls"}', 'tool_call'],
    ['responses', '', '{"type":"response.shell_call_output_content.delta","output_index":0,"item_id":"sh_1","command_index":0,"delta":{"stdout":"a.txt\\n","stderr":""}}', 'lifecycle'],
  ];
  for (const [format, event, data, want] of cases) {
    assert.equal(classify(newFacts(), format, event, data), want, `${format} ${data}`);
  }
});

const TIMELINE = sse(ROLE, ': keep-alive', content('Hel'), content('lo'), FINISH, USAGE, '[DONE]');

test('bytes unchanged and the same events whatever the read sizes and line endings', async () => {
  const base = await call(TIMELINE);
  assert.deepEqual(kinds(base.span), ['role', 'keepalive', 'content']);
  assert.equal(base.span.attributes[ATTR.contentCount], 2);
  assert.equal(base.span.attributes[ATTR.count], 7);
  assert.equal(base.span.attributes[ATTR.end], 'completed');
  assert.equal(base.span.attributes['gen_ai.usage.input_tokens'], 1500);
  assert.deepEqual(base.span.attributes['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(base.span.name, 'chat gpt-4.1');
  for (const eol of ['\n', '\r\n', '\r']) {
    const body = TIMELINE.replaceAll('\n', eol);
    for (const split of [1, 2, 3, 7, 64, 0]) {
      const r = await call(body, { split });
      assert.equal(r.text, body, `bytes changed (${JSON.stringify(eol)}, ${split})`);
      assert.deepEqual(kinds(r.span), kinds(base.span));
      assert.equal(r.span.attributes[ATTR.count], 7);
    }
  }
  // Multi-byte characters cut across reads.
  const utf = sse(content('héllo ✓ 日本'), '[DONE]');
  const r = await call(utf, { split: 1 });
  assert.equal(r.text, utf);
  assert.deepEqual(kinds(r.span), ['content']);
});

test('events are bounded; the summary carries count and gap', async () => {
  const frames = [ROLE];
  for (let i = 0; i < 150; i++) frames.push(': ping');
  for (let i = 0; i < 10000; i++) frames.push(content('t'));
  frames.push(FINISH, '[DONE]');
  const r = await call(sse(...frames), { split: 4096 });
  const k = kinds(r.span);
  assert.ok(k.length <= DEFAULT_EVENTS_BEFORE_CONTENT + 2, `${k.length} events`);
  assert.equal(k[0], 'role');
  assert.equal(k[k.length - 1], 'content');
  assert.equal(r.span.attributes[ATTR.contentCount], 10000);
  assert.equal(r.span.attributes[ATTR.count], 1 + 150 + 10000 + 2);
  assert.equal(typeof r.span.attributes[ATTR.maxGap], 'number');
  // Every chunk as an event, on a stream short enough for the SDK's default
  // of 128 events per span (which is why the default records so few).
  const short = [ROLE, ': ping', content('a'), ': ping', content('b'), FINISH];
  for (let i = 0; i < 100; i++) short.push(content('t'));
  short.push('[DONE]');
  const all = await call(sse(...short), { split: 97, options: { eventsAfterContent: -1 } });
  assert.equal(kinds(all.span).length, short.length);
  const bounded = await call(sse(...short), { split: 97 });
  assert.equal(bounded.span.attributes[ATTR.contentCount], 102);
  // The processor's rule over every event gives the summary's gap.
  let first; let last; let gap = 0;
  for (const e of all.span.events.filter((x) => x.name === EVENT_CHUNK)) {
    const t = e.time[0] * 1e3 + e.time[1] / 1e6;
    const kind = e.attributes[ATTR.kind];
    if (first === undefined) {
      if (['content', 'reasoning', 'tool_call'].includes(kind)) first = last = t;
      continue;
    }
    if (kind === 'keepalive') continue;
    gap = Math.max(gap, t - last);
    last = t;
  }
  assert.ok(Math.abs(gap / 1e3 - all.span.attributes[ATTR.maxGap]) < 1e-6, `events ${gap / 1e3} summary ${all.span.attributes[ATTR.maxGap]}`);
});

test('outcomes', async () => {
  let r = await call(sse(ROLE, content('a')));
  assert.equal(r.span.attributes[ATTR.end], 'eof');
  assert.equal(r.span.status.code, api.SpanStatusCode.UNSET);

  r = await call(sse(content('a'), '{"error":{"message":"died","type":"server_error"}}', content('b')));
  assert.equal(r.span.attributes[ATTR.end], 'stream_error');
  assert.equal(r.span.attributes['error.type'], 'server_error');
  assert.equal(r.span.status.code, api.SpanStatusCode.ERROR);
  assert.deepEqual(kinds(r.span), ['content', 'error']);

  r = await call(sse(content('a')), { error: new TypeError('terminated') });
  assert.equal(r.err.message, 'terminated');
  assert.equal(r.span.attributes[ATTR.end], 'error');
  assert.equal(r.span.attributes['error.type'], 'TypeError');

  const timeout = new DOMException('The operation timed out.', 'TimeoutError');
  r = await call(sse(ROLE), { error: timeout });
  assert.equal(r.span.attributes[ATTR.end], 'timeout');
  assert.equal(r.span.attributes['error.type'], 'timeout');

  r = await call('{"error":{"message":"slow down"}}', { status: 429, type: 'application/json' });
  assert.equal(r.span.attributes['error.type'], '429');
  assert.equal(r.span.status.code, api.SpanStatusCode.ERROR);
  assert.equal(r.text, '{"error":{"message":"slow down"}}');

  const body = '{"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}';
  r = await call(body, { type: 'application/json', reqBody: '{"model":"gpt-4.1"}' });
  assert.equal(r.text, body);
  assert.equal(r.span.attributes['gen_ai.request.stream'], false);
  assert.deepEqual(r.span.attributes['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(r.span.attributes['gen_ai.usage.input_tokens'], 9);
  assert.deepEqual(kinds(r.span), []);
});

test('app cancels the body', async () => {
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: fakeFetch(sse(content('a'), content('b')), { split: 10 }) });
  const resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{}' });
  const reader = resp.body.getReader();
  await reader.read();
  await reader.cancel();
  const [s] = memory.getFinishedSpans();
  assert.equal(s.attributes[ATTR.end], 'closed');
});

test('a parse failure stops instrumenting, never the stream', async () => {
  const body = sse(ROLE, '{"choices":[{]', content('x'), '[DONE]');
  const r = await call(body);
  assert.equal(r.text, body);
  assert.equal(r.span.attributes[ATTR.instrumentError], 'malformed chat event');
  assert.deepEqual(kinds(r.span), ['role']);
  assert.equal(r.span.attributes[ATTR.count], undefined);
});

test('other requests pass through untouched', async () => {
  memory.reset();
  const resp = new Response('x');
  const f = instrumentFetch({ tracerProvider: provider, fetch: async () => resp });
  assert.equal(await f('http://127.0.0.1:9/v1/embeddings', { method: 'POST', body: '{}' }), resp);
  assert.equal(await f('http://127.0.0.1:9/v1/chat/completions'), resp); // GET
  assert.equal(await f('http://127.0.0.1:9/v1/threads/thread_abc/messages', { method: 'POST', body: '{}' }), resp); // OpenAI Assistants
  // Another Vertex publisher's raw prediction is no Messages API.
  assert.equal(await f('http://127.0.0.1:9/v1/projects/p/locations/l/publishers/mistralai/models/m:rawPredict', { method: 'POST', body: '{}' }), resp);
  assert.equal(memory.getFinishedSpans().length, 0);
});

test('Claude on Vertex AI: the Messages API under a publisher path, the model in it', async () => {
  const body = ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'message_delta', 'message_stop'].map((e, i) => `event: ${e}\ndata: ${JSON.stringify([
    { type: 'message_start', message: { model: 'claude-sonnet-4-5@20250929', usage: { input_tokens: 3 } } },
    { type: 'ping' },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
    { type: 'message_stop' },
  ][i])}\n\n`).join('');
  const r = await call(body, {
    url: 'http://127.0.0.1:9/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5%4020250929:streamRawPredict',
    reqBody: '{"anthropic_version":"vertex-2023-10-16","stream":true,"max_tokens":64,"messages":[]}',
  });
  assert.equal(r.text, body);
  assert.deepEqual(kinds(r.span), ['lifecycle', 'keepalive', 'lifecycle', 'content']);
  assert.equal(r.span.attributes['gen_ai.provider.name'], 'gcp.vertex_ai');
  assert.equal(r.span.attributes['gen_ai.request.model'], 'claude-sonnet-4-5@20250929');
  assert.equal(r.span.attributes['gen_ai.request.stream'], true);
});

test('the caller\'s GenAI span is used; nested wrappers record once', async () => {
  memory.reset();
  const tracer = provider.getTracer('app');
  const inner = instrumentFetch({ tracerProvider: provider, fetch: fakeFetch(sse(ROLE, content('x'), '[DONE]')) });
  const outer = instrumentFetch({ tracerProvider: provider, fetch: inner });
  const span = tracer.startSpan('chat gpt-4.1', { kind: api.SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat' } });
  await api.context.with(api.trace.setSpan(api.context.active(), span), async () => {
    const resp = await outer('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"stream":true}' });
    await resp.text();
  });
  assert.equal(memory.getFinishedSpans().length, 0, 'a span beside the caller\'s');
  span.end();
  const [s] = memory.getFinishedSpans();
  assert.deepEqual(kinds(s), ['role', 'content']);
  assert.equal(s.attributes['gen_ai.request.stream'], true);
});

test('Response properties survive', async () => {
  const r = await call(sse('[DONE]'));
  assert.equal(r.resp.status, 200);
  assert.equal(r.resp.headers.get('content-type'), 'text/event-stream');
  assert.equal(typeof r.resp.url, 'string');
});

// Wrapper-side timeouts (firstTokenTimeoutMs, idleTimeoutMs).

// timedFetch answers after headersAt ms with an SSE body whose frames come
// at their times (ms after the call), then hangs (end: false) or ends. It
// follows the signal it was given, as fetch does, and clears its own timers
// when cancelled or aborted.
function timedFetch(frames, { headersAt = 0, end = false, type = 'text/event-stream', ignoreSignal = false } = {}) {
  const st = { signal: undefined, aborted: undefined, cancelled: undefined };
  const timers = new Set();
  const later = (ms, f) => {
    const h = setTimeout(() => {
      timers.delete(h);
      f();
    }, ms);
    timers.add(h);
  };
  const stopAll = () => {
    for (const h of timers) clearTimeout(h);
    timers.clear();
  };
  st.fetch = (url, init) => new Promise((resolve, reject) => {
    const t0 = Date.now();
    st.signal = init && init.signal;
    let controller;
    if (st.signal && st.signal.aborted && !ignoreSignal) {
      st.aborted = st.signal.reason;
      reject(st.signal.reason);
      return;
    }
    if (st.signal && !ignoreSignal) {
      st.signal.addEventListener('abort', () => {
        st.aborted = st.signal.reason;
        stopAll();
        reject(st.signal.reason);
        try {
          controller && controller.error(st.signal.reason);
        } catch { /* already closed */ }
      }, { once: true });
    }
    later(headersAt, () => {
      const body = new ReadableStream({
        start(c) {
          controller = c;
          for (const [at, f] of frames) later(Math.max(0, at - (Date.now() - t0)), () => c.enqueue(enc.encode(f)));
          if (end) later(Math.max(0, frames[frames.length - 1][0] + 1 - (Date.now() - t0)), () => c.close());
        },
        cancel(reason) {
          st.cancelled = reason === undefined ? 'cancelled' : reason;
          stopAll();
        },
      });
      resolve(new Response(body, { status: 200, headers: { 'content-type': type } }));
    });
  });
  st.pending = () => timers.size;
  return st;
}

// The timers the wrapper starts: setTimeout is watched for calls from
// index.cjs; a timer is live until it fired or was cleared.
const wrapperTimers = (() => {
  const file = require.resolve('../index.cjs');
  const live = new Set();
  let created = 0;
  const set = globalThis.setTimeout;
  const clear = globalThis.clearTimeout;
  globalThis.setTimeout = function setTimeout(fn, delay, ...args) {
    const caller = (new Error().stack || '').split('\n')[2] || '';
    if (!caller.includes(file)) return set(fn, delay, ...args);
    created++;
    const h = set(() => {
      live.delete(h);
      fn(...args);
    }, delay);
    live.add(h);
    return h;
  };
  globalThis.clearTimeout = function clearTimeout(h) {
    live.delete(h);
    return clear(h);
  };
  return { live: () => live.size, created: () => created };
})();
const activeTimers = () => wrapperTimers.live();
const ms = () => performance.now();
const sleep = (n) => new Promise((r) => setTimeout(r, n));

// read reads the body as an SDK does, holding each chunk hold ms, and
// returns the bytes it got and the error it ended with.
async function read(resp, hold = 0) {
  const reader = resp.body.getReader();
  const got = [];
  for (;;) {
    let r;
    try {
      r = await reader.read();
    } catch (err) {
      return { text: Buffer.concat(got).toString(), err };
    }
    if (r.done) return { text: Buffer.concat(got).toString() };
    got.push(Buffer.from(r.value));
    if (hold) await sleep(hold);
  }
}

async function timed(fake, options, init = {}) {
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: fake.fetch, ...options });
  const t0 = ms();
  let resp;
  let err;
  try {
    resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"model":"gpt-4.1","stream":true}', ...init });
  } catch (e) {
    err = e;
  }
  const out = resp ? await read(resp, options.hold) : { err };
  out.elapsed = ms() - t0;
  out.span = memory.getFinishedSpans()[0];
  return out;
}

test('firstTokenTimeoutMs: no content in time cuts the stream; what was read stays', async () => {
  const before = 0;
  const made = wrapperTimers.created();
  const fake = timedFetch([[10, sse(ROLE)], [20, sse(': keep-alive')]]);
  const r = await timed(fake, { firstTokenTimeoutMs: 150 });
  assert.equal(r.text, sse(ROLE) + sse(': keep-alive'), 'bytes read before the cut changed');
  assert.equal(r.err.name, 'TimeoutError');
  assert.match(r.err.message, /firstTokenTimeoutMs/);
  assert.ok(r.elapsed >= 149 && r.elapsed < 400, `cut after ${r.elapsed} ms`);
  assert.equal(r.span.attributes[ATTR.end], 'timeout');
  assert.equal(r.span.attributes['error.type'], 'timeout');
  assert.equal(r.span.status.code, api.SpanStatusCode.ERROR);
  assert.deepEqual(kinds(r.span), ['role', 'keepalive']);
  assert.equal(r.span.events.find((e) => e.name === 'exception').attributes['exception.type'], 'TimeoutError');
  assert.equal(fake.signal.aborted, true, 'the wrapped fetch was not aborted');
  assert.equal(fake.signal.reason, r.err);
  assert.equal(fake.pending(), 0);
  assert.equal(activeTimers(), before, 'a timer left behind');
  assert.ok(wrapperTimers.created() > made, 'no timer was started');
});

test('firstTokenTimeoutMs: before the headers the fetch is rejected, also when the wrapped fetch ignores its signal', async () => {
  const before = 0;
  const made = wrapperTimers.created();
  for (const ignoreSignal of [false, true]) {
    const fake = timedFetch([[400, sse(content('late'))]], { headersAt: 300, end: true, ignoreSignal });
    const r = await timed(fake, { firstTokenTimeoutMs: 100 });
    assert.equal(r.err.name, 'TimeoutError');
    assert.ok(r.elapsed >= 99 && r.elapsed < 280, `cut after ${r.elapsed} ms`);
    assert.equal(r.span.attributes[ATTR.end], 'timeout');
    assert.equal(r.span.attributes['error.type'], 'timeout');
    if (ignoreSignal) {
      await sleep(350); // the response came anyway: its body is cancelled
      assert.ok(fake.cancelled, 'late body not cancelled');
    }
    assert.equal(fake.pending(), 0);
  }
  assert.equal(activeTimers(), before, 'a timer left behind');
  assert.ok(wrapperTimers.created() > made, 'no timer was started');
});

test('firstTokenTimeoutMs: cleared by the first content, by a non-streamed call, by a parse failure, at the end', async () => {
  const before = 0;
  const made = wrapperTimers.created();
  // Each event comes 250 ms or more before the limit it races: a loaded
  // machine can stall the event loop past a narrower margin, and the
  // limit's timer then fires in the same turn as the frame's, first.
  // Content at 60 ms, then the stream goes on past the limit and ends.
  let r = await timed(timedFetch([[10, sse(ROLE)], [60, sse(content('a'))], [450, sse(content('b'))], [460, sse('[DONE]')]], { end: true }), { firstTokenTimeoutMs: 310 });
  assert.equal(r.err, undefined);
  assert.equal(r.span.attributes[ATTR.end], 'completed');
  assert.equal(activeTimers(), before, 'timer left after content');
  // Reasoning and tool calls stop the clock too.
  for (const d of [{ reasoning_content: 'x' }, { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '' } }] }]) {
    r = await timed(timedFetch([[50, sse(JSON.stringify({ choices: [{ index: 0, delta: d }] }))], [400, sse('[DONE]')]], { end: true }), { firstTokenTimeoutMs: 300 });
    assert.equal(r.err, undefined, JSON.stringify(d));
  }
  // A call that asked for no stream: no first token to wait for.
  r = await timed(timedFetch([[200, '{"choices":[]}']], { end: true, type: 'application/json' }), { firstTokenTimeoutMs: 50 }, { body: '{"model":"gpt-4.1"}' });
  assert.equal(r.err, undefined);
  assert.equal(r.text, '{"choices":[]}');
  // A JSON answer to a streamed request: the limit stops at the headers.
  r = await timed(timedFetch([[200, '{"choices":[]}']], { end: true, type: 'application/json' }), { firstTokenTimeoutMs: 50 });
  assert.equal(r.err, undefined);
  // Parsing stopped: content can no longer be seen, so the limit is off.
  r = await timed(timedFetch([[10, sse('{"choices":[{]')], [400, sse(content('x'))]], { end: true }), { firstTokenTimeoutMs: 260 });
  assert.equal(r.err, undefined);
  assert.equal(r.span.attributes[ATTR.instrumentError], 'malformed chat event');
  // The stream ended before the limit.
  r = await timed(timedFetch([[10, sse(ROLE)], [20, sse('[DONE]')]], { end: true }), { firstTokenTimeoutMs: 5000 });
  assert.equal(r.span.attributes[ATTR.end], 'completed');
  assert.equal(activeTimers(), before, 'a timer left behind');
  assert.ok(wrapperTimers.created() > made, 'no timer was started');
});

test('firstTokenTimeoutMs: the caller\'s abort wins and stays a cancel', async () => {
  const before = 0;
  const made = wrapperTimers.created();
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  const fake = timedFetch([[10, sse(ROLE)]]);
  const r = await timed(fake, { firstTokenTimeoutMs: 300 }, { signal: ac.signal });
  assert.equal(r.err.name, 'AbortError');
  assert.ok(r.elapsed < 290, `ended after ${r.elapsed} ms`);
  assert.equal(fake.signal.reason, ac.signal.reason, 'the caller\'s reason did not reach the wrapped fetch');
  await sleep(330); // past the limit: nothing changes
  assert.equal(r.span.attributes[ATTR.end], 'canceled');
  assert.equal(r.span.attributes['error.type'], undefined);
  assert.equal(memory.getFinishedSpans().length, 1);
  // The caller aborted first, and the wrapped fetch is slow to act on it:
  // the limit due later does not turn it into a timeout.
  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 40);
  const r1 = await timed(timedFetch([[10, sse(ROLE)], [450, sse('[DONE]')]], { end: true, ignoreSignal: true }), { firstTokenTimeoutMs: 300 }, { signal: ac2.signal });
  assert.equal(r1.err, undefined);
  assert.notEqual(r1.span.attributes[ATTR.end], 'timeout');
  // A caller's signal that is aborted already.
  const r2 = await timed(timedFetch([[10, sse(ROLE)]]), { firstTokenTimeoutMs: 120 }, { signal: AbortSignal.abort() });
  assert.equal(r2.err.name, 'AbortError');
  assert.equal(r2.span.attributes[ATTR.end], 'canceled');
  // The app cancels the body: closed, no timeout later.
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[10, sse(ROLE)]]).fetch, firstTokenTimeoutMs: 80 });
  const resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"stream":true}' });
  const reader = resp.body.getReader();
  await reader.read();
  await reader.cancel();
  await sleep(120);
  assert.equal(memory.getFinishedSpans()[0].attributes[ATTR.end], 'closed');
  assert.equal(activeTimers(), before, 'a timer left behind');
  assert.ok(wrapperTimers.created() > made, 'no timer was started');
});

test('firstTokenTimeoutMs: enforced when the span is sampled out', async () => {
  const before = 0;
  const made = wrapperTimers.created();
  const off = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
  const fake = timedFetch([[10, sse(ROLE)]]);
  const f = instrumentFetch({ tracerProvider: off, fetch: fake.fetch, firstTokenTimeoutMs: 80 });
  const resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"stream":true}' });
  const r = await read(resp);
  assert.equal(r.text, sse(ROLE));
  assert.equal(r.err.name, 'TimeoutError');
  assert.equal(activeTimers(), before, 'a timer left behind');
  assert.ok(wrapperTimers.created() > made, 'no timer was started');
});

test('idleTimeoutMs: a pause after content cuts; time the app holds a chunk does not count', async () => {
  const before = 0;
  const made = wrapperTimers.created();
  let r = await timed(timedFetch([[10, sse(ROLE)], [30, sse(content('a'))], [60, sse(': keep-alive')], [90, sse(': keep-alive')]]), { idleTimeoutMs: 150 });
  assert.equal(r.err.name, 'TimeoutError');
  assert.match(r.err.message, /idleTimeoutMs/);
  assert.ok(r.elapsed >= 179 && r.elapsed < 450, `cut after ${r.elapsed} ms`); // keep-alives do not end a pause
  assert.equal(r.text, sse(ROLE) + sse(content('a')) + sse(': keep-alive') + sse(': keep-alive'));
  assert.equal(r.span.attributes[ATTR.end], 'timeout');
  assert.equal(r.span.attributes['error.type'], 'timeout');
  assert.equal(r.span.attributes[ATTR.contentCount], 1);
  // The pause it was cut in (content at 30 ms, cut 150 ms after the last
  // keep-alive or later) is its longest: the collector censors the idle
  // window there. It was 0: no pause between two content chunks.
  assert.ok(r.span.attributes[ATTR.maxGap] >= 0.149, `max gap ${r.span.attributes[ATTR.maxGap]}`);
  // Chunks every 60 ms, the app holding each for 200 ms: never idle.
  const frames = [[10, sse(content('a'))]];
  for (let i = 1; i <= 3; i++) frames.push([10 + 60 * i, sse(content('b'))]);
  frames.push([200, sse('[DONE]')]);
  r = await timed(timedFetch(frames, { end: true }), { idleTimeoutMs: 100, hold: 200 });
  assert.equal(r.err, undefined);
  assert.equal(r.span.attributes[ATTR.end], 'completed');
  // With a first-token limit: the first one until content, then the idle one.
  r = await timed(timedFetch([[10, sse(ROLE)], [80, sse(content('a'))], [160, sse(content('b'))], [240, sse(content('c'))]]), { firstTokenTimeoutMs: 1000, idleTimeoutMs: 120 });
  assert.equal(r.err.name, 'TimeoutError');
  assert.ok(r.elapsed >= 359 && r.elapsed < 700, `cut after ${r.elapsed} ms`);
  assert.equal(r.span.attributes[ATTR.contentCount], 3);
  assert.equal(activeTimers(), before, 'a timer left behind');
  assert.ok(wrapperTimers.created() > made, 'no timer was started');
});

test('timeout options are checked when wrapping', () => {
  for (const name of ['firstTokenTimeoutMs', 'idleTimeoutMs']) {
    for (const v of [0, -1, NaN, Infinity, 2 ** 31, '500', true, {}]) {
      assert.throws(() => instrumentFetch({ fetch: async () => new Response(''), [name]: v }), (e) => e instanceof RangeError && e.message.includes(name), `${name}=${String(v)}`);
    }
    assert.equal(typeof instrumentFetch({ fetch: async () => new Response(''), [name]: 2.5 }), 'function');
    assert.equal(typeof instrumentFetch({ fetch: async () => new Response(''), [name]: undefined }), 'function');
  }
});

test('events stay under the SDK\'s limit whatever eventsAfterContent says', async () => {
  const frames = [ROLE];
  for (let i = 0; i < 30; i++) frames.push(': ping');
  for (let i = 0; i < 300; i++) frames.push(content('t'));
  frames.push(FINISH, '[DONE]');
  const r = await call(sse(...frames), { split: 997, options: { eventsAfterContent: -1 } });
  const k = kinds(r.span);
  assert.equal(k.length, MAX_CHUNK_EVENTS - 1, 'one kept for an error event');
  assert.equal(r.span.droppedEventsCount, 0, 'the SDK dropped events');
  assert.equal(k.indexOf('content'), 31, 'the first content is recorded');
  assert.equal(r.span.attributes[ATTR.unrecorded], frames.length - (MAX_CHUNK_EVENTS - 1));
  // Asked for many events before content too, the first content keeps its place.
  const early = [ROLE];
  for (let i = 0; i < 200; i++) early.push(': ping');
  early.push(content('a'), '{"error":{"message":"x","type":"server_error"}}');
  const e = await call(sse(...early), { split: 997, options: { eventsBeforeContent: 1000 } });
  const ek = kinds(e.span);
  assert.equal(ek.length, MAX_CHUNK_EVENTS);
  assert.deepEqual(ek.slice(-2), ['content', 'error']);
});

test('a lower OTEL_SPAN_EVENT_COUNT_LIMIT lowers the bound with it, so the SDK drops none', async () => {
  const frames = [ROLE];
  for (let i = 0; i < 60; i++) frames.push(': ping');
  for (let i = 0; i < 50; i++) frames.push(content('t'));
  frames.push(FINISH, '[DONE]');
  const saved = process.env.OTEL_SPAN_EVENT_COUNT_LIMIT;
  process.env.OTEL_SPAN_EVENT_COUNT_LIMIT = '32';
  try {
    // Both read the setting when built: the SDK's provider, and the fetch.
    const limited = tracerProvider();
    const f = instrumentFetch({ tracerProvider: limited.provider, fetch: fakeFetch(sse(...frames), { split: 997 }), eventsBeforeContent: 1000, eventsAfterContent: -1 });
    const resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"model":"gpt-4.1","stream":true}' });
    await resp.text();
    const [span] = limited.memory.getFinishedSpans();
    const k = kinds(span);
    assert.equal(k.length, 24 - 1, 'one kept for an error event');
    assert.equal(span.droppedEventsCount, 0, 'the SDK dropped events');
    assert.equal(k[0], 'role');
    assert.equal(k.indexOf('content'), 22, 'the first content is the last event');
    for (const [env, want] of [['16', 8 - 1], ['x', MAX_CHUNK_EVENTS - 1], ['-1', MAX_CHUNK_EVENTS - 1], ['200', MAX_CHUNK_EVENTS - 1]]) {
      process.env.OTEL_SPAN_EVENT_COUNT_LIMIT = env;
      const r = await call(sse(...frames, ...Array(200).fill(content('u'))), { split: 997, options: { eventsBeforeContent: 1000, eventsAfterContent: -1 } });
      assert.equal(kinds(r.span).length, want, `OTEL_SPAN_EVENT_COUNT_LIMIT=${env}`);
    }
  } finally {
    if (saved === undefined) delete process.env.OTEL_SPAN_EVENT_COUNT_LIMIT;
    else process.env.OTEL_SPAN_EVENT_COUNT_LIMIT = saved;
  }
});

test('events are on the call\'s own timeline, the one the caller\'s span started on', async () => {
  memory.reset();
  const realNow = Date.now;
  // The wall clock stepped 3 s ahead since the process started (an NTP
  // correction): performance.timeOrigin is 3 s behind Date.now() now.
  Date.now = () => realNow() + 3000;
  try {
    const tracer = provider.getTracer('app');
    const span = tracer.startSpan('chat gpt-4.1', { kind: api.SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat' } });
    const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[10, sse(ROLE)], [60, sse(content('a'))], [70, sse('[DONE]')]], { end: true }).fetch });
    await api.context.with(api.trace.setSpan(api.context.active(), span), async () => {
      const resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"stream":true}' });
      await resp.text();
    });
    span.end();
  } finally {
    Date.now = realNow;
  }
  const [s] = memory.getFinishedSpans();
  const ms = (t) => t[0] * 1e3 + t[1] / 1e6;
  const at = ms(s.events.find((e) => e.name === EVENT_CHUNK && e.attributes[ATTR.kind] === 'content').time) - ms(s.startTime);
  assert.ok(at >= 55 && at < 1000, `first content ${at.toFixed(1)} ms after the span's start`);
});

test('the caller\'s deadline after content is a deadline, the wrapper\'s idle cut an idle timeout', async (t) => {
  // AbortSignal.timeout's timer does not keep the process alive.
  const alive = setInterval(() => {}, 1000);
  t.after(() => clearInterval(alive));
  const r = await timed(timedFetch([[10, sse(content('a'))], [40, sse(content('b'))], [70, sse(content('c'))], [100, sse(content('d'))]]), {}, { signal: AbortSignal.timeout(150) });
  assert.equal(r.err.name, 'TimeoutError');
  assert.equal(r.span.attributes[ATTR.end], 'timeout');
  assert.equal(r.span.attributes['error.type'], 'deadline_exceeded');
  // Before any content the caller's deadline is a first-token timeout.
  const early = await timed(timedFetch([[10, sse(ROLE)]]), {}, { signal: AbortSignal.timeout(100) });
  assert.equal(early.span.attributes['error.type'], 'timeout');
  // With the wrapper's limits on, its own idle cut stays an idle timeout,
  // and the caller's deadline is still a deadline.
  const idle = await timed(timedFetch([[10, sse(content('a'))]]), { idleTimeoutMs: 60 }, { signal: AbortSignal.timeout(5000) });
  assert.equal(idle.span.attributes['error.type'], 'timeout');
  const late = await timed(timedFetch([[10, sse(content('a'))], [40, sse(content('b'))], [70, sse(content('c'))]]), { idleTimeoutMs: 1000 }, { signal: AbortSignal.timeout(150) });
  assert.equal(late.span.attributes['error.type'], 'deadline_exceeded');
});

test('after an error event the caller\'s abort still reaches a read; the body\'s end removes the listener', async () => {
  const ac = new AbortController();
  let live = 0;
  const add = ac.signal.addEventListener.bind(ac.signal);
  const remove = ac.signal.removeEventListener.bind(ac.signal);
  ac.signal.addEventListener = (...a) => { live++; return add(...a); };
  ac.signal.removeEventListener = (...a) => { live--; return remove(...a); };
  for (let i = 0; i < 3; i++) {
    memory.reset();
    // The server holds the connection open after its error event.
    const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[10, sse(content('a'))], [20, sse('{"error":{"message":"x","type":"server_error"}}')]]).fetch, idleTimeoutMs: 5000 });
    const resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"stream":true}', signal: ac.signal });
    const reader = resp.body.getReader();
    await reader.read();
    await reader.read(); // the error event
    assert.equal(memory.getFinishedSpans()[0].attributes[ATTR.end], 'stream_error');
    if (i < 2) {
      await reader.cancel(); // the SDK gives up on the body
      continue;
    }
    // The app reads on; the caller's abort ends the read.
    const pending = reader.read();
    setTimeout(() => ac.abort(), 20);
    await assert.rejects(pending, (e) => e.name === 'AbortError');
  }
  assert.equal(live, 0, 'listeners left on the caller\'s signal');
});
