'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const api = require('@opentelemetry/api');
const { instrumentFetch, EVENT_CHUNK, ATTR, DEFAULT_EVENTS_BEFORE_CONTENT } = require('../index.cjs');
const { classify, newFacts } = require('../lib/classify.cjs');
const { tracerProvider } = require('./otel.cjs');

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
    ['chat', '', JSON.stringify({ choices: [{ delta: { reasoning_content: 'x' } }] }), 'reasoning'],
    ['chat', '', JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0 }] } }] }), 'tool_call'],
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
    ['responses', '', '{"type":"error","code":"c","message":"m"}', 'error'],
    ['responses', '', '{"type":"response.failed","response":{"status":"failed"}}', 'error'],
    ['anthropic', 'ping', '{"type": "ping"}', 'keepalive'],
    ['anthropic', '', '{"type":"message_start","message":{}}', 'lifecycle'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}', 'content'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"x"}}', 'reasoning'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":""}}', 'tool_call'],
    ['anthropic', '', '{"type":"content_block_delta","delta":{"type":"signature_delta","signature":"x"}}', 'lifecycle'],
    ['anthropic', 'error', '{"type":"error","error":{"type":"overloaded_error"}}', 'error'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}', 'content'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"text":"x","thought":true}]}}]}', 'reasoning'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}]}', 'tool_call'],
    ['gemini', '', '{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}', 'lifecycle'],
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
  assert.equal(memory.getFinishedSpans().length, 0);
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
