'use strict';
// What one streamed chunk carried, per stream format. Greater rank wins when
// a chunk carries several things (n > 1 choices, several parts).

const RANK = { keepalive: 0, lifecycle: 1, role: 2, error: 3, reasoning: 4, tool_call: 5, content: 6 };
const stopsClock = (k) => RANK[k] >= RANK.reasoning;
const max = (a, b) => (RANK[b] > RANK[a] ? b : a);
const nonEmpty = (v) =>
  v !== null && v !== undefined && v !== false && v !== '' &&
  !(Array.isArray(v) && v.length === 0) &&
  !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v) => (typeof v === 'string' ? v : undefined);
const count = (v) => (Number.isSafeInteger(v) && v >= 0 ? v : undefined);

// A Chat delta's content: a string, or (Mistral) an array of parts. A text
// part is content when its text is non-empty, a thinking part (Magistral's
// reasoning) reasoning when its thinking is; any other part with a non-empty
// string, array or object member is content.
function chatContent(v) {
  if (!Array.isArray(v)) return nonEmpty(v) ? 'content' : 'lifecycle';
  let k = 'lifecycle';
  for (const part of v) {
    if (!isObj(part)) {
      if (nonEmpty(part)) k = max(k, 'content');
      continue;
    }
    for (const [key, val] of Object.entries(part)) {
      if (key === 'type') continue;
      if (key === 'thinking') {
        if (nonEmpty(val)) k = max(k, 'reasoning');
      } else if ((typeof val === 'string' || typeof val === 'object') && nonEmpty(val)) {
        k = max(k, 'content');
      }
    }
  }
  return k;
}

// A Chat delta's tool_calls (entries) or legacy function_call (one entry)
// starts or continues a tool call when some entry has a non-empty id, name or
// arguments, at the entry or in its function; an entry with only its index
// or type, or empty strings, carries nothing. Anything but an array or an
// object counts when non-empty.
function toolCallCarries(e) {
  if (!isObj(e)) return nonEmpty(e);
  if (nonEmpty(e.id) || nonEmpty(e.name) || nonEmpty(e.arguments)) return true;
  const fn = e.function;
  if (isObj(fn)) return nonEmpty(fn.name) || nonEmpty(fn.arguments);
  return nonEmpty(fn);
}
function toolCallsCarry(v) {
  if (Array.isArray(v)) return v.some(toolCallCarries);
  return isObj(v) ? toolCallCarries(v) : nonEmpty(v);
}

// Facts are what the stream says about the whole call.
function newFacts() {
  return { model: undefined, finish: [], input: undefined, output: undefined, cacheRead: undefined,
    cacheWrite: undefined, marker: false, errType: undefined, errMsg: undefined };
}

function addFinish(f, r) {
  if (typeof r === 'string' && r && r.length <= 64 && !f.finish.includes(r) && f.finish.length < 8) f.finish.push(r);
}
function setModel(f, m) {
  if (f.model === undefined && typeof m === 'string' && m && m.length <= 256) f.model = m;
}
function setError(f, type, msg) {
  if (f.errType !== undefined) return;
  f.errType = typeof type === 'string' && type && type.length <= 64 ? type : 'stream_error';
  f.errMsg = typeof msg === 'string' ? msg.slice(0, 512) : undefined;
}
function errorObject(f, e) {
  if (typeof e === 'string') return setError(f, undefined, e);
  if (!isObj(e)) return setError(f);
  setError(f, str(e.type) || str(e.code) || str(e.status), str(e.message));
}
function openaiUsage(f, u) {
  if (!isObj(u)) return;
  const input = count(u.prompt_tokens ?? u.input_tokens);
  const output = count(u.completion_tokens ?? u.output_tokens);
  if (input !== undefined) f.input = input;
  if (output !== undefined) f.output = output;
  const d = u.prompt_tokens_details ?? u.input_tokens_details;
  if (isObj(d) && count(d.cached_tokens) !== undefined) f.cacheRead = d.cached_tokens;
}

function chat(f, data) {
  const o = JSON.parse(data);
  if (!isObj(o)) throw new Error('not an object');
  let k = 'lifecycle';
  setModel(f, o.model);
  if (o.usage) openaiUsage(f, o.usage);
  if (o.error !== undefined && o.error !== null) {
    errorObject(f, o.error);
    k = 'error';
  }
  if (Array.isArray(o.choices)) {
    for (const c of o.choices) {
      if (!isObj(c)) continue;
      addFinish(f, c.finish_reason);
      if (nonEmpty(c.text)) k = max(k, 'content');
      const d = isObj(c.delta) ? c.delta : isObj(c.message) ? c.message : undefined;
      if (!d) continue;
      // The last audio delta of a stream holds only its id and expires_at.
      const audio = isObj(d.audio) ? nonEmpty(d.audio.data) || nonEmpty(d.audio.transcript) : nonEmpty(d.audio);
      if (nonEmpty(d.refusal) || audio) k = max(k, 'content');
      k = max(k, chatContent(d.content));
      if (toolCallsCarry(d.tool_calls) || toolCallsCarry(d.function_call)) k = max(k, 'tool_call');
      if (nonEmpty(d.reasoning_content) || nonEmpty(d.reasoning)) k = max(k, 'reasoning');
      if (nonEmpty(d.role)) k = max(k, 'role');
    }
  }
  return k;
}

const RESPONSES_CONTENT = new Set(['response.output_text.delta', 'response.refusal.delta', 'response.audio.delta',
  'response.audio.transcript.delta', 'response.output_audio.delta', 'response.output_audio_transcript.delta']);
const RESPONSES_REASONING = new Set(['response.reasoning_summary_text.delta', 'response.reasoning_text.delta',
  'response.reasoning.delta', 'response.reasoning_summary.delta']);

function responseObject(f, r) {
  if (!isObj(r)) return undefined;
  setModel(f, r.model);
  if (r.usage) openaiUsage(f, r.usage);
  if (r.error !== undefined && r.error !== null) errorObject(f, r.error);
  return str(r.status);
}

function responses(f, data, event) {
  const o = JSON.parse(data);
  if (!isObj(o)) throw new Error('not an object');
  const t = str(o.type) || event || '';
  const status = responseObject(f, o.response);
  // {"type":"keepalive","sequence_number":n}: sent during long requests; a
  // keep-alive like an SSE comment, it ends no pause.
  if (t === 'keepalive') return 'keepalive';
  if (t === 'error') {
    if (isObj(o.error)) errorObject(f, o.error);
    else setError(f, str(o.code), str(o.message));
    return 'error';
  }
  if (t === 'response.failed') {
    setError(f);
    return 'error';
  }
  if (t === 'response.completed' || t === 'response.incomplete') {
    f.marker = true;
    addFinish(f, status);
    return 'lifecycle';
  }
  if (t === 'response.output_item.added') {
    // A tool call starts with its item, which names the tool (as a Chat
    // stream's first tool_calls delta does): function_call,
    // custom_tool_call, mcp_call, …, and mcp_approval_request, a call to an
    // MCP tool the caller is to approve; a message or reasoning item starts empty.
    const it = isObj(o.item) ? str(o.item.type) : undefined;
    if (it && ((it.includes('call') && !it.endsWith('_output')) || it === 'mcp_approval_request')) return 'tool_call';
    return 'lifecycle';
  }
  if (t === 'response.image_generation_call.partial_image') return 'content'; // an image generated in parts
  if (t.endsWith('.delta')) {
    if ('delta' in o && !nonEmpty(o.delta)) return 'lifecycle';
    if (RESPONSES_CONTENT.has(t)) return 'content';
    if (RESPONSES_REASONING.has(t)) return 'reasoning';
    // function_call_arguments, custom_tool_call_input, …; not a tool's output
    // (shell_call_output_content: a command's stdout).
    if (t.includes('call') && !t.includes('call_output')) return 'tool_call';
  }
  return 'lifecycle';
}

function anthropicUsage(f, u, skipOutput) {
  if (!isObj(u)) return;
  if (count(u.input_tokens)) f.input = u.input_tokens;
  // message_start's output_tokens is a placeholder before any content.
  if (!skipOutput && count(u.output_tokens) !== undefined) f.output = u.output_tokens;
  if (count(u.cache_read_input_tokens) !== undefined) f.cacheRead = u.cache_read_input_tokens;
  if (count(u.cache_creation_input_tokens) !== undefined) f.cacheWrite = u.cache_creation_input_tokens;
}

function anthropicMessage(f, m, started) {
  if (!isObj(m)) return;
  setModel(f, m.model);
  anthropicUsage(f, m.usage, started);
  addFinish(f, m.stop_reason);
}

// deltaCarries: an Anthropic delta's payload (text, thinking, partial_json,
// citation) is non-empty; a delta without any of those carries what its
// type says.
function deltaCarries(d) {
  let payload = false;
  for (const key of ['text', 'thinking', 'partial_json', 'citation']) {
    if (key in d) {
      payload = true;
      if (nonEmpty(d[key])) return true;
    }
  }
  return !payload;
}

function anthropic(f, data, event) {
  const o = JSON.parse(data);
  if (!isObj(o)) throw new Error('not an object');
  const t = str(o.type) || event || '';
  if (o.message) anthropicMessage(f, o.message, true);
  if (o.usage) anthropicUsage(f, o.usage, false);
  if (isObj(o.delta)) addFinish(f, o.delta.stop_reason);
  switch (t) {
    case 'ping':
      return 'keepalive';
    case 'error':
      errorObject(f, o.error);
      return 'error';
    case 'message_stop':
      f.marker = true;
      return 'lifecycle';
    case 'content_block_start': {
      // A tool call starts with its block, which names the tool; a text or
      // thinking block usually starts empty, but may carry its first text
      // (the SDKs keep it; Anthropic-format gateways send it).
      const b = isObj(o.content_block) ? o.content_block : {};
      switch (b.type) {
        case 'tool_use':
        case 'server_tool_use':
        case 'mcp_tool_use':
          return 'tool_call';
        case 'text':
          return nonEmpty(b.text) ? 'content' : 'lifecycle';
        case 'thinking':
          return nonEmpty(b.thinking) ? 'reasoning' : 'lifecycle';
        case 'redacted_thinking':
          // Carries its (encrypted) thinking in the start itself; no delta follows.
          return 'reasoning';
      }
      return 'lifecycle';
    }
    case 'content_block_delta':
      if (!isObj(o.delta) || !deltaCarries(o.delta)) return 'lifecycle'; // "text":"" and the like
      switch (o.delta.type) {
        case 'text_delta':
        case 'citations_delta':
          return 'content';
        case 'thinking_delta':
          return 'reasoning';
        case 'input_json_delta':
          return 'tool_call';
      }
  }
  return 'lifecycle';
}

function gemini(f, data) {
  const o = JSON.parse(data);
  if (!isObj(o)) throw new Error('not an object');
  let k = 'lifecycle';
  setModel(f, o.modelVersion);
  const u = o.usageMetadata;
  if (isObj(u)) {
    if (count(u.promptTokenCount) !== undefined) f.input = u.promptTokenCount;
    if (count(u.candidatesTokenCount) !== undefined) f.output = u.candidatesTokenCount;
    if (count(u.cachedContentTokenCount) !== undefined) f.cacheRead = u.cachedContentTokenCount;
  }
  if (o.error !== undefined && o.error !== null) {
    errorObject(f, o.error);
    k = 'error';
  }
  if (Array.isArray(o.candidates)) {
    for (const c of o.candidates) {
      if (!isObj(c)) continue;
      if (typeof c.finishReason === 'string') {
        addFinish(f, c.finishReason);
        f.marker = true;
      }
      const parts = isObj(c.content) && Array.isArray(c.content.parts) ? c.content.parts : [];
      for (const p of parts) {
        if (!isObj(p)) continue;
        // toolCall: a server-side (built-in) tool the model calls.
        if (nonEmpty(p.functionCall) || nonEmpty(p.toolCall)) k = max(k, 'tool_call');
        // executableCode: code the model wrote for code execution.
        else if ((nonEmpty(p.text) || nonEmpty(p.inlineData) || nonEmpty(p.executableCode)) && p.thought === true) k = max(k, 'reasoning');
        else if (nonEmpty(p.text) || nonEmpty(p.inlineData) || nonEmpty(p.executableCode)) k = max(k, 'content');
      }
    }
  }
  return k;
}

const FORMATS = { chat, responses, anthropic, gemini };

// classify returns the kind of one SSE event; it throws on data that is not
// what the format promises.
function classify(f, format, event, data) {
  if (data.trim() === '[DONE]') {
    // Chat's completion marker. OpenAI-compatible servers end other
    // formats' streams with it too (the OpenAI SDKs accept it on every
    // endpoint): there it is framing, and the format's own marker
    // (response.completed, message_stop) says whether the call finished.
    if (format === 'chat') f.marker = true;
    return 'lifecycle';
  }
  return FORMATS[format](f, data, event);
}

// classifyResponse reads a non-streamed JSON body for model, usage and
// finish reasons; what it cannot read it leaves out.
function classifyResponse(f, format, text) {
  let o;
  try {
    o = JSON.parse(text);
  } catch {
    return;
  }
  if (!isObj(o)) return;
  try {
    if (format === 'anthropic') anthropicMessage(f, o, false);
    else if (format === 'responses') addFinish(f, responseObject(f, o));
    else FORMATS[format](f, text);
  } catch {
    // a body the classifier cannot read adds nothing
  }
}

module.exports = { classify, classifyResponse, newFacts, stopsClock, RANK };
