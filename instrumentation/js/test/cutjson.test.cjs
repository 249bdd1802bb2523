'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { completeCut } = require('../lib/cutjson.cjs');
const { instrumentFetch, EVENT_CHUNK, ATTR } = require('../index.cjs');
const { tracerProvider } = require('./otel.cjs');

// Events of every format, with escapes, nesting, numbers and literals.
const EVENTS = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hé "quoted" \\ \n\u00e9' }, finish_reason: null }], usage: null },
  { type: 'response.output_item.added', output_index: 1, item: { type: 'function_call', name: 'f', arguments: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Par' } },
  { candidates: [{ content: { role: 'model', parts: [{ text: 'hm', thought: true }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0K' } }] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: -1.5e3 } },
  [1, true, false, null, 'x', [], {}],
];

// Cut at every character, the completion parses, and a string value that
// was cut keeps the characters that arrived (JSON.stringify's escapes
// included: the completion never splits one).
test('a JSON text cut anywhere completes to JSON that parses', () => {
  for (const ev of EVENTS) {
    const s = JSON.stringify(ev);
    for (let i = 1; i < s.length; i++) {
      const cut = s.slice(0, i);
      const whole = completeCut(cut);
      if (whole === undefined) continue;
      assert.doesNotThrow(() => JSON.parse(whole), `cut ${JSON.stringify(cut)} → ${JSON.stringify(whole)}`);
      assert.ok(whole.length <= cut.length + 1 + 8, `cut ${JSON.stringify(cut)} grew to ${JSON.stringify(whole)}`);
    }
    assert.deepEqual(JSON.parse(completeCut(s)), ev, 'an uncut text is itself');
  }
  assert.equal(completeCut('{"a":"xx'), '{"a":"xx"}');
  assert.equal(completeCut('{"a":1,"b":'), '{"a":1}', 'a key without its value is left out');
  assert.equal(completeCut('["a\\u00'), '["a"]', 'an escape is never split');
  assert.equal(completeCut('{"k'), '{}', 'a cut key is left out');
});

// An event longer than the line limit is read as far as it goes: a Gemini
// model's first chunk that is a 2 MiB inline image is its first content, a
// 2 MiB Chat delta too, and the stream is read on.
test('an event longer than the line limit is read as far as it goes', async () => {
  const { provider, memory } = tracerProvider();
  const big = 'A'.repeat(2 << 20);
  for (const [url, frames, want] of [
    ['http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      [JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: big } }] } }] }),
        JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'done' }] }, finishReason: 'STOP' }] })],
      'content'],
    ['http://127.0.0.1:9/v1/chat/completions',
      [JSON.stringify({ choices: [{ index: 0, delta: { content: big } }] }), JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), '[DONE]'],
      'content'],
  ]) {
    memory.reset();
    const body = frames.map((f) => `data: ${f}\n\n`).join('');
    const f = instrumentFetch({ tracerProvider: provider, fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }) });
    const resp = await f(url, { method: 'POST', body: '{"model":"m","stream":true,"contents":[]}' });
    assert.equal((await resp.text()).length, body.length);
    const span = memory.getFinishedSpans()[0];
    const kinds = span.events.filter((e) => e.name === EVENT_CHUNK).map((e) => e.attributes[ATTR.kind]);
    assert.deepEqual(kinds, [want], url);
    assert.equal(span.attributes[ATTR.instrumentError], undefined, url);
    assert.equal(span.attributes[ATTR.end], 'completed', url);
  }
});
