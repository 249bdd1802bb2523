'use strict';
// A fake LLM on loopback: each request follows the timeline of the scenario
// its model name picks (model "scn-<name>"), from the moment it arrived.
const http = require('node:http');

const scenarios = [
  { name: 'role_then_content', stream: true, firstContent: 300, outcome: 'complete',
    timeline: [[40, 'role'], [300, 'content'], [320, 'content'], [340, 'content'], [350, 'finish'], [355, 'usage'], [360, 'done']] },
  { name: 'keepalives', stream: true, firstContent: 400, outcome: 'complete',
    timeline: [[50, 'keepalive'], [150, 'keepalive'], [250, 'keepalive'], [260, 'role'], [330, 'keepalive'], [400, 'content'], [420, 'content'], [430, 'finish'], [435, 'done']] },
  { name: 'reasoning_first', stream: true, firstContent: 200, outcome: 'complete',
    timeline: [[40, 'role'], [200, 'reasoning'], [260, 'reasoning'], [500, 'content'], [520, 'finish'], [525, 'done']] },
  { name: 'tool_call', stream: true, firstContent: 250, outcome: 'complete',
    timeline: [[40, 'role'], [250, 'tool'], [270, 'toolargs'], [300, 'finishtool'], [305, 'done']] },
  { name: 'mid_stream_error', stream: true, firstContent: 200, outcome: 'error',
    timeline: [[40, 'role'], [200, 'content'], [300, 'error']] },
  { name: 'rate_limited', stream: true, status: 429, outcome: 'error' },
  // The JS SDKs abort their own request when the caller's signal fires,
  // without its reason: the wrapper sees a cancel, not a timeout (README).
  { name: 'stall', stream: true, timeout: 600, outcome: 'closed', timeline: [[40, 'role'], [60, 'stall']] },
  // The wrapper's own limits (options: instrumentFetch options; cutAt: when
  // the wrapper must cut, ms after the call).
  { name: 'stall_first_token_timeout', stream: true, options: { firstTokenTimeoutMs: 500 }, cutAt: 500, outcome: 'timeout_first_token',
    timeline: [[40, 'role'], [60, 'keepalive'], [80, 'stall']] },
  { name: 'stall_before_headers', stream: true, headersAt: 3000, options: { firstTokenTimeoutMs: 400 }, cutAt: 400, outcome: 'timeout_first_token',
    timeline: [[3040, 'role'], [3100, 'content'], [3110, 'finish'], [3120, 'done']] },
  { name: 'stall_after_content', stream: true, firstContent: 150, options: { firstTokenTimeoutMs: 1000, idleTimeoutMs: 300 }, cutAt: 450, outcome: 'timeout_idle',
    timeline: [[40, 'role'], [150, 'content'], [160, 'stall']] },
  { name: 'stall_caller_timeout_first', stream: true, timeout: 300, options: { firstTokenTimeoutMs: 800 }, outcome: 'closed',
    timeline: [[40, 'role'], [60, 'stall']] },
  // Each limit is 200 ms or more past what it waits for: a loaded machine
  // stalls the event loop past narrower margins.
  { name: 'limits_not_reached', stream: true, firstContent: 300, options: { firstTokenTimeoutMs: 550, idleTimeoutMs: 350 }, outcome: 'complete',
    timeline: [[40, 'role'], [300, 'content'], [450, 'content'], [600, 'content'], [610, 'finish'], [615, 'usage'], [620, 'done']] },
  { name: 'closed_without_marker', stream: true, firstContent: 150, outcome: 'closed',
    timeline: [[40, 'role'], [150, 'content'], [200, 'content']] },
  { name: 'caller_abort', stream: true, firstContent: 150, abort: true, outcome: 'closed',
    timeline: [[40, 'role'], [150, 'content'], [1500, 'content'], [1510, 'finish'], [1520, 'done']] },
  { name: 'one_shot', stream: false, outcome: 'complete' }, // not streamed ("stream" in a model name reads as streamed)
];

const data = (v) => `data: ${v}\n\n`;
const event = (n, v) => `event: ${n}\ndata: ${v}\n\n`;

function chatWire(model) {
  const chunk = (delta, finish = null) => data(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1764547200, model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }));
  return {
    contentType: 'text/event-stream',
    frame(op) {
      switch (op) {
        case 'role': return chunk({ role: 'assistant', content: '' });
        case 'content': return chunk({ content: 'Hello' });
        case 'reasoning': return chunk({ reasoning_content: 'Thinking' });
        case 'tool': return chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] });
        case 'toolargs': return chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] });
        case 'keepalive': return ': keep-alive\n\n';
        case 'finish': return chunk({}, 'stop');
        case 'finishtool': return chunk({}, 'tool_calls');
        case 'usage': return data(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1764547200, model, choices: [], usage: { prompt_tokens: 1200, completion_tokens: 3, total_tokens: 1203 } }));
        case 'done': return data('[DONE]');
        case 'error': return data(JSON.stringify({ error: { message: 'upstream overloaded', type: 'server_error', code: 'overloaded' } }));
      }
      return '';
    },
    nonStreamed: () => JSON.stringify({ id: 'chatcmpl-2', object: 'chat.completion', created: 1764547200, model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1200, completion_tokens: 1, total_tokens: 1201 } }),
  };
}

function anthropicWire(model) {
  let block = 0;
  let open = '';
  const openBlock = (kind) => {
    if (open === kind) return '';
    let s = '';
    if (open) {
      s += event('content_block_stop', JSON.stringify({ type: 'content_block_stop', index: block }));
      block++;
    }
    open = kind;
    const cb = kind === 'text' ? { type: 'text', text: '' } : kind === 'thinking' ? { type: 'thinking', thinking: '', signature: '' }
      : { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} };
    return s + event('content_block_start', JSON.stringify({ type: 'content_block_start', index: block, content_block: cb }));
  };
  const delta = (d) => event('content_block_delta', JSON.stringify({ type: 'content_block_delta', index: block, delta: d }));
  return {
    contentType: 'text/event-stream; charset=utf-8',
    frame(op) {
      switch (op) {
        case 'role': return event('message_start', JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model, content: [],
          stop_reason: null, stop_sequence: null, usage: { input_tokens: 1200, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 } } }));
        case 'content': return openBlock('text') + delta({ type: 'text_delta', text: 'Hello' });
        case 'reasoning': return openBlock('thinking') + delta({ type: 'thinking_delta', thinking: 'Thinking' });
        case 'tool': return openBlock('tool_use') + delta({ type: 'input_json_delta', partial_json: '' });
        case 'toolargs': return delta({ type: 'input_json_delta', partial_json: '{"city":"Paris"}' });
        case 'keepalive': return event('ping', '{"type": "ping"}');
        case 'finish':
        case 'finishtool': {
          let s = '';
          if (open) {
            s = event('content_block_stop', JSON.stringify({ type: 'content_block_stop', index: block }));
            open = '';
          }
          return s + event('message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: op === 'finish' ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: 3 } }));
        }
        case 'done': return event('message_stop', '{"type":"message_stop"}');
        case 'error': return event('error', JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      }
      return '';
    },
    nonStreamed: () => JSON.stringify({ id: 'msg_2', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1200, output_tokens: 1 } }),
  };
}

function geminiWire(model) {
  const resp = (parts, finish, usage) => data(JSON.stringify({
    candidates: [{ content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
    ...(usage ? { usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 3, totalTokenCount: 1203 } } : {}),
    modelVersion: model }));
  return {
    contentType: 'text/event-stream',
    frame(op) {
      switch (op) {
        case 'role': return ''; // Gemini sends no role-only chunk
        case 'content': return resp([{ text: 'Hello' }]);
        case 'reasoning': return resp([{ text: 'Thinking', thought: true }]);
        case 'tool': return resp([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }]);
        case 'finish':
        case 'finishtool': return resp([{ text: '' }], 'STOP', true);
        case 'error': return data(JSON.stringify({ error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }));
      }
      return '';
    },
    nonStreamed: () => JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hello' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 1, totalTokenCount: 1201 }, modelVersion: model }),
  };
}

function wireFor(path, model) {
  if (path.endsWith('/chat/completions')) return chatWire(model);
  if (path.endsWith('/messages')) return anthropicWire(model);
  if (path.includes(':streamGenerateContent') || path.includes(':generateContent')) return geminiWire(model);
  return undefined;
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, Math.max(0, ms));
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

function startFakeLLM() {
  const server = http.createServer(async (req, res) => {
    const arrived = Date.now();
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    let body = '';
    for await (const c of req) body += c;
    const url = new URL(req.url, 'http://x');
    let model;
    let stream;
    try {
      const o = JSON.parse(body);
      model = o.model;
      stream = o.stream === true;
    } catch { /* Gemini: model in the path */ }
    const m = /\/models\/([^:]+):(\w+)/.exec(url.pathname);
    if (m) {
      model = decodeURIComponent(m[1]);
      stream = m[2] === 'streamGenerateContent';
    }
    const sc = scenarios.find((s) => `scn-${s.name}` === model);
    const wire = wireFor(url.pathname, model);
    if (!sc || !wire) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"unknown"}}');
      return;
    }
    if (sc.status) {
      res.writeHead(sc.status, { 'content-type': 'application/json', 'retry-after': '0' })
        .end('{"error":{"message":"rate limited","type":"rate_limit_error","code":429,"status":"RESOURCE_EXHAUSTED"},"type":"error"}');
      return;
    }
    if (sc.headersAt) await sleep(arrived + sc.headersAt - Date.now(), ac.signal);
    if (ac.signal.aborted) return;
    if (!stream) {
      await sleep(200, ac.signal);
      res.writeHead(200, { 'content-type': 'application/json' }).end(wire.nonStreamed());
      return;
    }
    res.writeHead(200, { 'content-type': wire.contentType, 'cache-control': 'no-cache' });
    res.flushHeaders();
    for (const [at, op] of sc.timeline) {
      await sleep(arrived + at - Date.now(), ac.signal);
      if (ac.signal.aborted) return;
      if (op === 'stall') {
        await sleep(10000, ac.signal);
        res.end();
        return;
      }
      const f = wire.frame(op);
      if (f) res.write(f);
    }
    res.end();
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) }));
  });
}

module.exports = { scenarios, startFakeLLM };
