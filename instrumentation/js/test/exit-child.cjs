'use strict';
// Run by exit.test.cjs in a process of its own: the real SDKs through
// instrumentFetch with limits far longer than the test, against the fake LLM
// at argv[2], then one call the limit cuts. It prints one JSON line and
// returns; a timer the wrapper left behind would keep the process alive.
const OpenAI = require('openai');
const Anthropic = require('@anthropic-ai/sdk');
const { GoogleGenAI } = require('@google/genai');
const { instrumentFetch, ATTR } = require('../index.cjs');
const { tracerProvider } = require('./otel.cjs');

const LONG = 600000; // ten minutes
const base = process.argv[2];
const { provider, memory } = tracerProvider();

const calls = {
  async openai(fetch, model, signal) {
    const client = new OpenAI({ apiKey: 'test', baseURL: `${base}/v1`, fetch, maxRetries: 0 });
    const params = { model, messages: [{ role: 'user', content: 'hi' }] };
    if (model === 'scn-one_shot') return client.chat.completions.create(params, { signal });
    for await (const c of await client.chat.completions.create({ ...params, stream: true }, { signal })) if (c.choices[0]?.delta?.content) signal.onContent?.();
  },
  async anthropic(fetch, model, signal) {
    const client = new Anthropic({ apiKey: 'test', baseURL: base, fetch, maxRetries: 0 });
    const params = { model, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] };
    if (model === 'scn-one_shot') return client.messages.create(params, { signal });
    for await (const ev of await client.messages.create({ ...params, stream: true }, { signal })) if (ev.type === 'content_block_delta') signal.onContent?.();
  },
  async 'google-genai'(fetch, model, signal) {
    const ai = new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: base, fetch, retryOptions: { attempts: 1 } } });
    const params = { model, contents: 'hi', config: { abortSignal: signal } };
    if (model === 'scn-one_shot') return ai.models.generateContent(params);
    for await (const c of await ai.models.generateContentStream(params)) if (c.candidates?.[0]?.content?.parts?.some((p) => p.text)) signal.onContent?.();
  },
};

async function main() {
  const out = [];
  for (const [sdk, call] of Object.entries(calls)) {
    const cases = [
      ['role_then_content', { firstTokenTimeoutMs: LONG, idleTimeoutMs: LONG }],
      ['mid_stream_error', { firstTokenTimeoutMs: LONG, idleTimeoutMs: LONG }],
      ['rate_limited', { firstTokenTimeoutMs: LONG }],
      ['one_shot', { firstTokenTimeoutMs: LONG }],
      ['caller_abort', { firstTokenTimeoutMs: LONG, idleTimeoutMs: LONG }],
      ['stall', { firstTokenTimeoutMs: 300, idleTimeoutMs: LONG }],
    ];
    for (const [name, options] of cases) {
      memory.reset();
      const ac = new AbortController();
      const signal = ac.signal;
      if (name === 'caller_abort') signal.onContent = () => ac.abort();
      const fetch = instrumentFetch({ tracerProvider: provider, ...options });
      let err;
      try {
        await call(fetch, `scn-${name}`, signal);
      } catch (e) {
        err = e;
      }
      const [span] = memory.getFinishedSpans();
      out.push({ sdk, name, end: span && span.attributes[ATTR.end], err: err && err.name });
    }
  }
  await provider.shutdown();
  process.stdout.write(`${JSON.stringify({ at: Date.now(), out })}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
