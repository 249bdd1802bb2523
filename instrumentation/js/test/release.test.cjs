'use strict';
// A body whose reader is released before its end (@google/genai on break) ends its span as closed.
const test = require('node:test');
const assert = require('node:assert/strict');
const { GoogleGenAI } = require('@google/genai');
const { instrumentFetch, ATTR } = require('../index.cjs');
const { startFakeLLM } = require('./fakellm.cjs');
const { tracerProvider } = require('./otel.cjs');
const { sleep, kinds, timedFetch } = require('./streams.cjs');

const { provider, memory } = tracerProvider();

// @google/genai reads the body with getReader() and, when the app leaves its
// for await loop, only releases the reader's lock (no cancel): the span must
// still end (README: it ends "when the app cancels the body"; an abandoned
// stream is the app closing it), else the call never reaches the collector.
test('@google/genai, break out of for await: the span ends as closed', async () => {
  const llm = await startFakeLLM();
  try {
    memory.reset();
    const ai = new GoogleGenAI({ apiKey: 't', httpOptions: { baseUrl: llm.url, fetch: instrumentFetch({ tracerProvider: provider }), retryOptions: { attempts: 1 } } });
    for await (const c of await ai.models.generateContentStream({ model: 'scn-role_then_content', contents: 'hi' })) {
      assert.ok(c);
      break;
    }
    await sleep(600); // the server has finished its stream (360 ms)
    const spans = memory.getFinishedSpans();
    assert.equal(spans.length, 1, 'no span ended: the call is lost');
    assert.equal(spans[0].attributes[ATTR.end], 'closed');
    assert.deepEqual(kinds(spans[0]), ['content']);
  } finally {
    await llm.close();
  }
});

test('a reader released before the end ends the span; one released after a re-read does not cut it short', async () => {
  memory.reset();
  const body = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"}}]}\n\ndata: [DONE]\n\n';
  const f = instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[0, body.slice(0, 48)], [0, body.slice(48)]]) });
  let resp = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"model":"m","stream":true}' });
  let reader = resp.body.getReader();
  await reader.read();
  reader.releaseLock();
  await sleep(20);
  let spans = memory.getFinishedSpans();
  assert.equal(spans.length, 1, 'an abandoned body left its span open');
  assert.equal(spans[0].attributes[ATTR.end], 'closed');
  // A consumer that takes a new reader at once reads on: the span ends with the body.
  memory.reset();
  resp = await (instrumentFetch({ tracerProvider: provider, fetch: timedFetch([[0, body.slice(0, 48)], [0, body.slice(48)]]) }))('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{"model":"m","stream":true}' });
  reader = resp.body.getReader();
  await reader.read();
  reader.releaseLock();
  reader = resp.body.getReader();
  while (!(await reader.read()).done);
  spans = memory.getFinishedSpans();
  assert.equal(spans.length, 1);
  assert.equal(spans[0].attributes[ATTR.end], 'completed');
});
