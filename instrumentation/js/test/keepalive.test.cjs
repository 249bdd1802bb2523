'use strict';
// A Responses API keepalive event is a keep-alive: it neither ends a pause nor holds off idleTimeoutMs.
const test = require('node:test');
const assert = require('node:assert/strict');
const { instrumentFetch, ATTR } = require('../index.cjs');
const { classify, newFacts } = require('../lib/classify.cjs');
const { tracerProvider } = require('./otel.cjs');
const { kinds, timedFetch } = require('./streams.cjs');

const { provider, memory } = tracerProvider();

// OpenAI's Responses API sends {"type":"keepalive","sequence_number":n}
// events during long requests (openai/openai-node#1964): keep-alives, which
// end no pause (ttft.chunk.max_gap, idleTimeoutMs).
test('a Responses keepalive event is a keep-alive', async () => {
  assert.equal(classify(newFacts(), 'responses', 'keepalive', '{"type":"keepalive","sequence_number":7}'), 'keepalive');
  memory.reset();
  const ev = (type, o = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  const f = instrumentFetch({ tracerProvider: provider, eventsAfterContent: -1, fetch: timedFetch([
    [10, ev('response.output_text.delta', { delta: 'Hi' })],
    [80, ev('keepalive', { sequence_number: 5 })],
    [80, ev('keepalive', { sequence_number: 6 })],
    [80, ev('response.output_text.delta', { delta: ' there' })],
    [0, ev('response.completed', { response: { status: 'completed' } })],
  ]) });
  const resp = await f('http://127.0.0.1:9/v1/responses', { method: 'POST', body: '{"model":"m","stream":true}' });
  await resp.text();
  const [s] = memory.getFinishedSpans();
  assert.deepEqual(kinds(s), ['content', 'keepalive', 'keepalive', 'content', 'lifecycle']);
  assert.ok(s.attributes[ATTR.maxGap] >= 0.22, `ttft.chunk.max_gap ${s.attributes[ATTR.maxGap]} s: the keep-alives ended the 240 ms pause`);
});

test('idleTimeoutMs is not held off by Responses keepalive events', async () => {
  memory.reset();
  const ev = (type, o = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  const pieces = [[10, ev('response.output_text.delta', { delta: 'Hi' })]];
  for (let i = 0; i < 8; i++) pieces.push([50, ev('keepalive', { sequence_number: i })]);
  pieces.push([0, ev('response.output_text.delta', { delta: ' there' })], [0, ev('response.completed', { response: { status: 'completed' } })]);
  const f = instrumentFetch({ tracerProvider: provider, idleTimeoutMs: 200, fetch: timedFetch(pieces) });
  const resp = await f('http://127.0.0.1:9/v1/responses', { method: 'POST', body: '{"model":"m","stream":true}' });
  await assert.rejects(resp.text(), (e) => e.name === 'TimeoutError');
  const [s] = memory.getFinishedSpans();
  assert.equal(s.attributes[ATTR.end], 'timeout');
});
