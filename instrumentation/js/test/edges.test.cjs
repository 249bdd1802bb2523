'use strict';
// Edge cases a mutation audit of the classifiers and the wrapper found no
// other test pinned: each test fails with one plausible bug in lib/ or index.cjs.
const test = require('node:test');
const assert = require('node:assert/strict');
const api = require('@opentelemetry/api');
const { instrumentFetch, EVENT_CHUNK, ATTR } = require('../index.cjs');
const { classify, newFacts } = require('../lib/classify.cjs');
const { tracerProvider } = require('./otel.cjs');
const { sleep, kinds, timedFetch } = require('./streams.cjs');

const { provider, memory } = tracerProvider();
const sse = (...frames) => frames.map((f) => (f.startsWith(':') ? `${f}\n\n` : `data: ${f}\n\n`)).join('');
const ev = (type, o = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;

async function call(url, body, options = {}, reqBody = '{"model":"m","stream":true}') {
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch(typeof body === 'string' ? [[0, body]] : body, options), ...options });
  const resp = await f(url, { method: 'POST', body: reqBody });
  let err;
  try {
    await resp.text();
  } catch (e) {
    err = e;
  }
  return { span: memory.getFinishedSpans()[0], err, resp };
}
const CHAT = 'http://127.0.0.1:9/v1/chat/completions';
const RESPONSES = 'http://127.0.0.1:9/v1/responses';
const MESSAGES = 'http://127.0.0.1:9/v1/messages';

test('kinds the table in fetch.test leaves out', () => {
  const cases = [
    // Legacy /v1/completions: the text is in the choice itself.
    ['chat', '', '{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"Hello","finish_reason":null}]}', 'content'],
    ['chat', '', '{"choices":[{"index":0,"delta":{"refusal":"I can\'t help with that."}}]}', 'content'],
    // OpenRouter, vLLM ≥ 0.9: "reasoning" beside "reasoning_content".
    ['chat', '', '{"choices":[{"index":0,"delta":{"reasoning":"Let me think"}}]}', 'reasoning'],
    // A tool call's function given as a non-empty string counts.
    ['chat', '', '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":"get_weather"}]}}]}', 'tool_call'],
    // A tool's output item is no call by the model.
    ['responses', '', '{"type":"response.output_item.added","output_index":1,"item":{"type":"shell_call_output","id":"sho_1","output":[]}}', 'lifecycle'],
    ['responses', '', '{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call_output","call_id":"c1","output":""}}', 'lifecycle'],
    // An empty delta carries nothing.
    ['responses', '', '{"type":"response.output_text.delta","item_id":"msg_1","delta":""}', 'lifecycle'],
    ['responses', '', '{"type":"response.function_call_arguments.delta","delta":""}', 'lifecycle'],
    // A server tool (web search) starts with its block, as a client tool does.
    ['anthropic', '', '{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}', 'tool_call'],
    ['anthropic', '', '{"type":"content_block_start","index":1,"content_block":{"type":"mcp_tool_use","id":"mcptoolu_1","name":"echo","server_name":"s","input":{}}}', 'tool_call'],
    ['anthropic', '', '{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}}}', 'content'],
  ];
  for (const [format, event, data, want] of cases) {
    assert.equal(classify(newFacts(), format, event, data), want, `${format} ${data}`);
  }
});

test('a Responses stream ends completed at response.completed or response.incomplete', async () => {
  for (const [last, finish] of [['response.completed', 'completed'], ['response.incomplete', 'incomplete']]) {
    const body = ev('response.created', { response: { status: 'in_progress' } }) +
      ev('response.output_text.delta', { delta: 'Hi' }) +
      ev(last, { response: { status: finish, model: 'gpt-4.1-2025-04-14', usage: { input_tokens: 5, output_tokens: 1 } } });
    const { span } = await call(RESPONSES, body);
    assert.equal(span.attributes[ATTR.end], 'completed', last);
    assert.deepEqual(span.attributes['gen_ai.response.finish_reasons'], [finish], last);
    assert.equal(span.attributes['gen_ai.usage.output_tokens'], 1, last);
  }
  // Without its marker it is no completed call.
  const { span } = await call(RESPONSES, ev('response.output_text.delta', { delta: 'Hi' }));
  assert.equal(span.attributes[ATTR.end], 'eof');
});

test('[DONE] completes a Chat stream only: elsewhere it is framing', async () => {
  // An OpenAI-compatible gateway ends an Anthropic-format stream with [DONE]
  // and no message_stop: the call did not say it finished.
  const body = ev('message_start', { message: { model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } } }) +
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }) + 'data: [DONE]\n\n';
  let { span } = await call(MESSAGES, body);
  assert.equal(span.attributes[ATTR.end], 'eof');
  // message_start's output_tokens is a placeholder: no message_delta came, so no output count.
  assert.equal(span.attributes['gen_ai.usage.input_tokens'], 3);
  assert.equal(span.attributes['gen_ai.usage.output_tokens'], undefined);
  ({ span } = await call(RESPONSES, ev('response.output_text.delta', { delta: 'Hi' }) + 'data: [DONE]\n\n'));
  assert.equal(span.attributes[ATTR.end], 'eof');
  ({ span } = await call(CHAT, sse('{"choices":[{"index":0,"delta":{"content":"a"}}]}', '[DONE]')));
  assert.equal(span.attributes[ATTR.end], 'completed');
});

test('finish reasons are listed once over n choices', async () => {
  const { span } = await call(CHAT, sse(
    '{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}',
    '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{},"finish_reason":"stop"}]}',
    '{"choices":[{"index":2,"delta":{},"finish_reason":"length"}]}',
    '[DONE]'));
  assert.deepEqual(span.attributes['gen_ai.response.finish_reasons'], ['stop', 'length']);
});

const ROLE = '{"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}';
const content = (s) => JSON.stringify({ choices: [{ index: 0, delta: { content: s } }] });

test('a Content-Type is read without regard to case', async () => {
  const { span } = await call(CHAT, sse(ROLE, content('a'), '[DONE]'), { type: 'Text/Event-Stream; charset=utf-8' });
  assert.deepEqual(kinds(span), ['role', 'content']);
  assert.equal(span.attributes[ATTR.end], 'completed');
});

test('eventsBeforeContent 0: only the first chunk and the first content', async () => {
  const { span } = await call(CHAT, sse(ROLE, ': keep-alive', ': keep-alive', content('a'), '[DONE]'), { eventsBeforeContent: 0 });
  assert.deepEqual(kinds(span), ['role', 'content']);
  assert.equal(span.attributes[ATTR.unrecorded], 3);
});

test('a comment inside an event is no keep-alive chunk', async () => {
  const { span } = await call(CHAT, `data: ${content('a')}\n: proxy note\n\ndata: [DONE]\n\n`);
  assert.deepEqual(kinds(span), ['content']);
  assert.equal(span.attributes[ATTR.count], 2);
});

test('content_count counts every chunk that stops the clock', async () => {
  const { span } = await call(CHAT, sse(ROLE,
    '{"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":""}}]}}]}',
    content('a'), '[DONE]'));
  assert.equal(span.attributes[ATTR.count], 5);
  assert.equal(span.attributes[ATTR.contentCount], 3);
});

test('ttft.chunk.max_gap: none without content; the pause at the end is no gap unless an idle cut', async () => {
  let { span } = await call(CHAT, sse(ROLE, ': keep-alive'));
  assert.equal(span.attributes[ATTR.count], 2);
  assert.equal(span.attributes[ATTR.maxGap], undefined);
  // The body ends 150 ms after the last content (only a keep-alive between):
  // a pause no chunk ended, and no timeout cut it.
  ({ span } = await call(CHAT, [[0, sse(content('a'))], [0, sse(content('b'))], [150, sse(': keep-alive')]]));
  assert.equal(span.attributes[ATTR.end], 'eof');
  assert.ok(span.attributes[ATTR.maxGap] < 0.1, `max gap ${span.attributes[ATTR.maxGap]}`);
});

test('the caller\'s deadline after content: max_gap is the longest completed pause, not the one it was cut in', async (t) => {
  const alive = setInterval(() => {}, 1000);
  t.after(() => clearInterval(alive));
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[10, sse(content('a'))], [30, sse(content('b'))], [30, sse(content('c'))], [5000, sse(content('d'))]]) });
  const signal = AbortSignal.timeout(250);
  const resp = await f(CHAT, { method: 'POST', body: '{"stream":true}', signal });
  // The fake ignores the signal, as a body read does not: the app cancels on it.
  const reader = resp.body.getReader();
  const done = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  await Promise.race([(async () => { for (;;) if ((await reader.read()).done) return; })(), done]);
  await reader.cancel(signal.reason).catch(() => {});
  const [span] = memory.getFinishedSpans();
  assert.equal(span.attributes['error.type'], 'deadline_exceeded');
  assert.ok(span.attributes[ATTR.maxGap] < 0.15, `max gap ${span.attributes[ATTR.maxGap]}: the cut pause (≈ 180 ms) was written`);
});

test('idleTimeoutMs: the pause is counted from the read, not from a chunk the app held', async () => {
  memory.reset();
  // Each chunk comes 30 ms after the SDK asks for it; the app holds each for 250 ms.
  const f = instrumentFetch({ tracerProvider: provider, idleTimeoutMs: 150, fetch: timedFetch([[10, sse(content('a'))], [30, sse(content('b'))], [30, sse('[DONE]')]]) });
  const resp = await f(CHAT, { method: 'POST', body: '{"stream":true}' });
  const reader = resp.body.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    await sleep(250);
  }
  const [span] = memory.getFinishedSpans();
  assert.equal(span.attributes[ATTR.end], 'completed');
  assert.equal(span.attributes['error.type'], undefined);
});

test('the caller\'s INTERNAL GenAI span is used as a CLIENT one is', async () => {
  memory.reset();
  const span = provider.getTracer('app').startSpan('invoke_agent', { kind: api.SpanKind.INTERNAL, attributes: { 'gen_ai.operation.name': 'chat' } });
  const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[0, sse(ROLE, content('a'), '[DONE]')]]) });
  await api.context.with(api.trace.setSpan(api.context.active(), span), async () => {
    await (await f(CHAT, { method: 'POST', body: '{"stream":true}' })).text();
  });
  assert.equal(memory.getFinishedSpans().length, 0, 'a span of its own beside the caller\'s');
  span.end();
  const [s] = memory.getFinishedSpans();
  assert.deepEqual(kinds(s), ['role', 'content']);
  assert.equal(s.attributes[ATTR.end], 'completed');
});

test('the headers: a ttft.headers event before the first chunk, the status code, HTTP 400 an error', async () => {
  let { span } = await call(CHAT, [[20, sse(content('a'), '[DONE]')]]);
  const names = span.events.map((e) => e.name);
  assert.deepEqual(names, ['ttft.headers', EVENT_CHUNK]);
  assert.equal(span.attributes['http.response.status_code'], 200);
  ({ span } = await call(CHAT, '{"error":{"message":"bad request","type":"invalid_request_error"}}', { status: 400, type: 'application/json' }));
  assert.equal(span.attributes['http.response.status_code'], 400);
  assert.equal(span.attributes['error.type'], '400');
  assert.equal(span.status.code, api.SpanStatusCode.ERROR);
});

test('the returned Response keeps url, redirected and type', async () => {
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, fetch: async (...a) => {
    const resp = await timedFetch([[0, sse(content('a'), '[DONE]')]])(...a);
    Object.defineProperty(resp, 'url', { value: 'https://api.example.com/v1/chat/completions' });
    Object.defineProperty(resp, 'redirected', { value: true });
    Object.defineProperty(resp, 'type', { value: 'cors' });
    return resp;
  } });
  const resp = await f(CHAT, { method: 'POST', body: '{"stream":true}' });
  assert.equal(resp.url, 'https://api.example.com/v1/chat/completions');
  assert.equal(resp.redirected, true);
  assert.equal(resp.type, 'cors');
  await resp.text();
});

test('a body cancelled after the stream\'s end marker is completed; after the caller\'s abort, canceled', async () => {
  memory.reset();
  let f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[0, sse(content('a'), '[DONE]')], [200, sse(': trailing')]]) });
  let resp = await f(CHAT, { method: 'POST', body: '{"stream":true}' });
  let reader = resp.body.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(memory.getFinishedSpans()[0].attributes[ATTR.end], 'completed');
  // The caller aborts (the fake ignores its signal); the app then cancels the body.
  memory.reset();
  const ac = new AbortController();
  f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[0, sse(content('a'))], [200, sse(content('b'))]]) });
  resp = await f(CHAT, { method: 'POST', body: '{"stream":true}', signal: ac.signal });
  reader = resp.body.getReader();
  await reader.read();
  ac.abort();
  await reader.cancel(ac.signal.reason);
  const [span] = memory.getFinishedSpans();
  assert.equal(span.attributes[ATTR.end], 'canceled');
  assert.equal(span.attributes['error.type'], undefined);
});

test('timeout options: 2147483647 ms is the largest accepted', () => {
  for (const name of ['firstTokenTimeoutMs', 'idleTimeoutMs']) {
    assert.equal(typeof instrumentFetch({ fetch: async () => new Response(''), [name]: 2147483647 }), 'function', name);
    assert.throws(() => instrumentFetch({ fetch: async () => new Response(''), [name]: 2147483648 }), RangeError, name);
  }
});

test('firstTokenTimeoutMs: a call that asked for no stream is not cut before its headers', async () => {
  memory.reset();
  const body = '{"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}';
  const f = instrumentFetch({ tracerProvider: provider, firstTokenTimeoutMs: 50, fetch: async () => {
    await sleep(150);
    return new Response(body, { headers: { 'content-type': 'application/json' } });
  } });
  const resp = await f(CHAT, { method: 'POST', body: '{"model":"gpt-4.1","stream":false}' });
  assert.equal(await resp.text(), body);
  const [span] = memory.getFinishedSpans();
  assert.equal(span.attributes[ATTR.end], 'eof');
  assert.equal(span.attributes['error.type'], undefined);
});

test('firstTokenTimeoutMs: a caller\'s signal aborted before the call wins, also when the wrapped fetch ignores it', async () => {
  memory.reset();
  const f = instrumentFetch({ tracerProvider: provider, firstTokenTimeoutMs: 80, fetch: timedFetch([[10, sse(ROLE)], [250, sse(content('a'), '[DONE]')]]) });
  const resp = await f(CHAT, { method: 'POST', body: '{"stream":true}', signal: AbortSignal.abort() });
  const text = await resp.text(); // no TimeoutError: the limit is the caller's to waive
  assert.equal(text, sse(ROLE) + sse(content('a'), '[DONE]'));
  const [span] = memory.getFinishedSpans();
  assert.notEqual(span.attributes[ATTR.end], 'timeout');
  assert.notEqual(span.attributes['error.type'], 'timeout');
});
