package ttftstream

import (
	"slices"
	"strings"
	"testing"
)

func TestClassifyChunks(t *testing.T) {
	cases := []struct {
		name   string
		format format
		event  string
		data   string
		want   kind
	}{
		// OpenAI Chat Completions.
		{"chat role-only with empty content", formatChat, "", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, kindRole},
		{"chat content", formatChat, "", `{"choices":[{"delta":{"content":"Hel"}}]}`, kindContent},
		{"chat refusal", formatChat, "", `{"choices":[{"delta":{"refusal":"no"}}]}`, kindContent},
		{"chat reasoning_content", formatChat, "", `{"choices":[{"delta":{"reasoning_content":"think"}}]}`, kindReasoning},
		{"chat reasoning", formatChat, "", `{"choices":[{"delta":{"reasoning":"think"}}]}`, kindReasoning},
		{"chat tool_calls", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":""}}]}}]}`, kindToolCall},
		{"chat empty tool_calls", formatChat, "", `{"choices":[{"delta":{"tool_calls":[]}}]}`, kindLifecycle},
		{"chat mistral thinking part", formatChat, "", `{"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"The user is asking"}]}]},"finish_reason":null}]}`, kindReasoning},
		{"chat mistral text part", formatChat, "", `{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"2 + 2 = 4"}]},"finish_reason":null}]}`, kindContent},
		{"chat empty text part", formatChat, "", `{"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"text","text":""}]}}]}`, kindRole},
		{"chat part with a flag only", formatChat, "", `{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[],"closed":true}]}}]}`, kindLifecycle},
		{"chat empty content array", formatChat, "", `{"choices":[{"index":0,"delta":{"role":"assistant","content":[]}}]}`, kindRole},
		{"chat tool_calls arguments only", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\""}}]}}]}`, kindToolCall},
		{"chat tool_calls id only", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function"}]}}]}`, kindToolCall},
		{"chat tool_calls second entry carries", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0},{"index":1,"function":{"name":"g"}}]}}]}`, kindToolCall},
		{"chat tool_calls index only", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}`, kindLifecycle},
		{"chat tool_calls empty entry", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{}]}}]}`, kindLifecycle},
		{"chat tool_calls empty strings", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"","arguments":""}}]}}]}`, kindLifecycle},
		{"chat tool_calls null function", formatChat, "", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":null}]}}]}`, kindLifecycle},
		{"chat function_call empty", formatChat, "", `{"choices":[{"delta":{"function_call":{"arguments":""}}}]}`, kindLifecycle},
		{"chat function_call arguments", formatChat, "", `{"choices":[{"delta":{"function_call":{"arguments":"{}"}}}]}`, kindToolCall},
		{"chat role with index-only tool_calls", formatChat, "", `{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0}]}}]}`, kindRole},
		{"chat function_call", formatChat, "", `{"choices":[{"delta":{"function_call":{"name":"f"}}}]}`, kindToolCall},
		{"chat finish-only", formatChat, "", `{"choices":[{"delta":{},"finish_reason":"stop"}]}`, kindLifecycle},
		{"chat usage-only", formatChat, "", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}`, kindLifecycle},
		{"chat done", formatChat, "", `[DONE]`, kindLifecycle},
		{"chat error object", formatChat, "", `{"error":{"message":"boom","type":"server_error"}}`, kindError},
		{"chat null error", formatChat, "", `{"error":null,"choices":[{"delta":{"content":"x"}}]}`, kindContent},
		{"chat second choice has content", formatChat, "", `{"choices":[{"index":0,"delta":{"role":"assistant"}},{"index":1,"delta":{"content":"b"}}]}`, kindContent},
		{"chat null content", formatChat, "", `{"choices":[{"delta":{"content":null,"role":"assistant"}}]}`, kindRole},
		{"chat legacy completions text", formatChat, "", `{"choices":[{"text":"hi","index":0}]}`, kindContent},
		{"chat content with escapes", formatChat, "", `{"choices":[{"delta":{"content":"\"\\\u00e9"}}]}`, kindContent},
		// OpenAI Responses.
		{"responses created", formatResponses, "response.created", `{"type":"response.created","response":{"id":"r","status":"in_progress"}}`, kindLifecycle},
		{"responses in_progress", formatResponses, "", `{"type":"response.in_progress"}`, kindLifecycle},
		{"responses output_item.added", formatResponses, "", `{"type":"response.output_item.added","item":{"type":"message"}}`, kindLifecycle},
		{"responses function_call item added", formatResponses, "", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}`, kindToolCall},
		{"responses reasoning item added", formatResponses, "", `{"type":"response.output_item.added","item":{"type":"reasoning","summary":[]}}`, kindLifecycle},
		{"responses mcp approval request added", formatResponses, "", `{"type":"response.output_item.added","output_index":2,"item":{"type":"mcp_approval_request","id":"mcpr_1","name":"create_short_url","arguments":"{\"url\":\"x\"}","server_label":"zip1"}}`, kindToolCall},
		{"responses mcp tool list added", formatResponses, "", `{"type":"response.output_item.added","output_index":0,"item":{"type":"mcp_list_tools","server_label":"zip1","tools":[]}}`, kindLifecycle},
		{"responses done", formatResponses, "", `[DONE]`, kindLifecycle},
		{"responses content_part.added", formatResponses, "", `{"type":"response.content_part.added"}`, kindLifecycle},
		{"responses output_text.delta", formatResponses, "", `{"type":"response.output_text.delta","delta":"Hi"}`, kindContent},
		{"responses empty delta", formatResponses, "", `{"type":"response.output_text.delta","delta":""}`, kindLifecycle},
		{"responses refusal.delta", formatResponses, "", `{"type":"response.refusal.delta","delta":"no"}`, kindContent},
		{"responses audio.delta", formatResponses, "", `{"type":"response.audio.delta","delta":"AAA="}`, kindContent},
		{"chat audio data", formatChat, "", `{"choices":[{"index":0,"delta":{"audio":{"id":"audio_1","transcript":"Hi"}}}]}`, kindContent},
		{"chat audio end", formatChat, "", `{"choices":[{"index":0,"delta":{"audio":{"id":"audio_1","expires_at":1729018505}}}]}`, kindLifecycle},
		{"responses reasoning summary", formatResponses, "", `{"type":"response.reasoning_summary_text.delta","delta":"hm"}`, kindReasoning},
		{"responses reasoning text", formatResponses, "", `{"type":"response.reasoning_text.delta","delta":"hm"}`, kindReasoning},
		{"responses function args", formatResponses, "", `{"type":"response.function_call_arguments.delta","delta":"{\""}`, kindToolCall},
		{"responses custom tool input", formatResponses, "", `{"type":"response.custom_tool_call_input.delta","delta":"x"}`, kindToolCall},
		{"responses text done", formatResponses, "", `{"type":"response.output_text.done","text":"Hi"}`, kindLifecycle},
		{"responses completed", formatResponses, "", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":2}}}`, kindLifecycle},
		{"responses error", formatResponses, "error", `{"type":"error","code":"rate_limit","message":"slow down"}`, kindError},
		{"responses failed", formatResponses, "", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"x"}}}`, kindError},
		{"responses type from event name", formatResponses, "response.output_text.delta", `{"delta":"Hi"}`, kindContent},
		// Anthropic Messages.
		{"anthropic message_start", formatAnthropic, "message_start", `{"type":"message_start","message":{"model":"claude","usage":{"input_tokens":12,"output_tokens":1}}}`, kindLifecycle},
		{"anthropic block start", formatAnthropic, "", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, kindLifecycle},
		{"anthropic ping", formatAnthropic, "ping", `{"type": "ping"}`, kindKeepalive},
		{"anthropic text_delta", formatAnthropic, "", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, kindContent},
		{"anthropic thinking_delta", formatAnthropic, "", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`, kindReasoning},
		{"anthropic redacted_thinking block", formatAnthropic, "", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}`, kindReasoning},
		{"gemini executableCode", formatGemini, "", `{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}}],"role":"model"}}]}`, kindContent},
		{"responses partial image", formatResponses, "", `{"type":"response.image_generation_call.partial_image","output_index":0,"partial_image_index":0,"partial_image_b64":"iVBOR"}`, kindContent},
		{"anthropic signature_delta", formatAnthropic, "", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"x"}}`, kindLifecycle},
		{"anthropic input_json_delta", formatAnthropic, "", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`, kindToolCall},
		// A tool call starts with the block that names the tool (the
		// fixtures' ground truth: first content at tool_block_start).
		{"anthropic tool_use block start", formatAnthropic, "", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"get_weather","input":{}}}`, kindToolCall},
		{"anthropic server_tool_use block start", formatAnthropic, "", `{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"t1","name":"web_search"}}`, kindToolCall},
		{"anthropic thinking block start", formatAnthropic, "", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`, kindLifecycle},
		// An empty delta carries nothing.
		{"anthropic empty text_delta", formatAnthropic, "", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`, kindLifecycle},
		{"anthropic empty thinking_delta", formatAnthropic, "", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}`, kindLifecycle},
		{"anthropic empty input_json_delta", formatAnthropic, "", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`, kindLifecycle},
		{"anthropic block stop", formatAnthropic, "", `{"type":"content_block_stop","index":0}`, kindLifecycle},
		{"anthropic message_delta", formatAnthropic, "", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}`, kindLifecycle},
		{"anthropic message_stop", formatAnthropic, "", `{"type":"message_stop"}`, kindLifecycle},
		{"anthropic error", formatAnthropic, "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, kindError},
		// Gemini.
		{"gemini text", formatGemini, "", `{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}`, kindContent},
		{"gemini thought", formatGemini, "", `{"candidates":[{"content":{"parts":[{"text":"hm","thought":true}],"role":"model"}}]}`, kindReasoning},
		{"gemini thought after text key", formatGemini, "", `{"candidates":[{"content":{"parts":[{"thought":true,"text":"hm"}]}}]}`, kindReasoning},
		{"gemini function call", formatGemini, "", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}`, kindToolCall},
		{"gemini finish-only", formatGemini, "", `{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":7}}`, kindLifecycle},
		{"gemini usage-only", formatGemini, "", `{"usageMetadata":{"promptTokenCount":4},"modelVersion":"gemini-2.5-flash"}`, kindLifecycle},
		{"gemini error", formatGemini, "", `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`, kindError},
		// A block may start with its first text (the SDKs keep it: the
		// accumulated message begins with it); Anthropic-format gateways send it.
		{"anthropic text block start with text", formatAnthropic, "", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hello","citations":null}}`, kindContent},
		{"anthropic thinking block start with thinking", formatAnthropic, "", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"Let me see","signature":""}}`, kindReasoning},
		// Gemini server-side tool invocations (include_server_side_tool_invocations):
		// the model's call of a built-in tool is a toolCall part, its result a toolResponse part.
		{"gemini server-side tool call", formatGemini, "", `{"candidates":[{"content":{"parts":[{"toolCall":{"id":"tc_1","toolType":"GOOGLE_SEARCH_WEB","args":{"queries":["northernmost city in the US"]}}}],"role":"model"}}]}`, kindToolCall},
		{"gemini server-side tool response", formatGemini, "", `{"candidates":[{"content":{"parts":[{"toolResponse":{"id":"tc_1","toolType":"GOOGLE_SEARCH_WEB","response":{"results":[]}}}],"role":"model"}}]}`, kindLifecycle},
		// A hosted shell command's stdout/stderr is the tool's output, not the model's.
		{"responses shell command delta", formatResponses, "", `{"type":"response.shell_call_command.delta","output_index":0,"command_index":0,"delta":"ls"}`, kindToolCall},
		{"responses shell output delta", formatResponses, "", `{"type":"response.shell_call_output_content.delta","output_index":0,"item_id":"sh_1","command_index":0,"delta":{"stdout":"a.txt\n","stderr":""}}`, kindLifecycle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f facts
			got, ok := f.classify(c.format, []byte(c.event), []byte(c.data), false)
			if !ok {
				t.Fatalf("classify reported malformed input")
			}
			if got != c.want {
				t.Errorf("kind = %s, want %s", got, c.want)
			}
		})
	}
}

func TestClassifyFacts(t *testing.T) {
	var f facts
	for _, d := range []string{
		`{"model":"gpt-4.1","choices":[{"delta":{"role":"assistant"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{},"finish_reason":"length"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":34,"prompt_tokens_details":{"cached_tokens":1024}}}`,
		`[DONE]`,
	} {
		if _, ok := f.classify(formatChat, nil, []byte(d), false); !ok {
			t.Fatalf("malformed: %s", d)
		}
	}
	if f.model != "gpt-4.1" || !slices.Equal(f.finish, []string{"stop", "length"}) || f.inputTokens != 1200 ||
		f.outputTokens != 34 || f.cacheRead != 1024 || !f.marker {
		t.Errorf("facts = %+v", f)
	}

	var a facts
	for _, d := range []string{
		`{"type":"message_start","message":{"model":"claude-sonnet-4","usage":{"input_tokens":20,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}`,
		`{"type":"message_stop"}`,
	} {
		a.classify(formatAnthropic, nil, []byte(d), false)
	}
	if a.model != "claude-sonnet-4" || a.inputTokens != 20 || a.cacheRead != 100 || a.cacheWrite != 5 ||
		a.outputTokens != 40 || !slices.Equal(a.finish, []string{"tool_use"}) || !a.marker {
		t.Errorf("anthropic facts = %+v", a)
	}
}

func TestAnthropicStartOutputIsAPlaceholder(t *testing.T) {
	var f facts
	f.classify(formatAnthropic, nil, []byte(`{"type":"message_start","message":{"usage":{"input_tokens":20,"output_tokens":1}}}`), false)
	if f.hasOutput || !f.hasInput {
		t.Errorf("message_start: output kept %v, input kept %v", f.hasOutput, f.hasInput)
	}
}

func TestClassifyRejectsMalformed(t *testing.T) {
	for _, d := range []string{`{"choices":[{"delta":`, `not json`, `{"choices":[}`, `{"a" 1}`, ``} {
		var f facts
		if _, ok := f.classify(formatChat, nil, []byte(d), false); ok {
			t.Errorf("%q accepted", d)
		}
	}
	// A frame cut by the line limit is read as far as it goes.
	var f facts
	k, ok := f.classify(formatAnthropic, nil, []byte(`{"type":"content_block_delta","delta":{"type":"text_delta","text":"aaaa`), true)
	if !ok || k != kindContent {
		t.Errorf("cut frame: %s %v", k, ok)
	}
	// A frame longer than the limit carries what its start says: a 2 MiB
	// image part is a Gemini model's first content, a long delta a Chat one.
	for _, c := range []struct {
		ft   format
		data string
	}{
		{formatGemini, `{"candidates":[{"content":{"role":"model","parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo`},
		{formatChat, `{"choices":[{"index":0,"delta":{"content":"aaaa`},
		{formatResponses, `{"type":"response.output_text.delta","delta":"aaaa`},
	} {
		var f facts
		if k, ok := f.classify(c.ft, nil, []byte(c.data), true); !ok || k != kindContent {
			t.Errorf("cut %q: %s %v, want content", c.data, k, ok)
		}
	}
}

func TestClassifyRequest(t *testing.T) {
	cases := []struct {
		path   string
		format format
		model  string
		stream bool
	}{
		{"/v1/chat/completions", formatChat, "", false},
		{"/openai/deployments/gpt/chat/completions", formatChat, "", false},
		{"/v1/completions", formatChat, "", false},
		{"/v1/responses", formatResponses, "", false},
		{"/v1/messages", formatAnthropic, "", false},
		{"/v1/messages/count_tokens", formatNone, "", false},
		{"/v1/threads/thread_abc/messages", formatNone, "", false}, // OpenAI Assistants: no model call
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", formatGemini, "gemini-2.5-flash", true},
		{"/v1beta/models/gemini-2.5-flash:generateContent", formatGemini, "gemini-2.5-flash", false},
		{"/v1/embeddings", formatNone, "", false},
		{"/v1/models", formatNone, "", false},
		// Claude on Vertex AI: the Messages API under a publisher path.
		{"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict", formatAnthropic, "claude-sonnet-4-5@20250929", true},
		{"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict", formatAnthropic, "claude-sonnet-4-5@20250929", false},
		{"/v1/projects/p/locations/us-east5/publishers/mistralai/models/mistral-large:rawPredict", formatNone, "", false},
		{"/v1/projects/p/locations/us-east5/endpoints/123:rawPredict", formatNone, "", false},
	}
	for _, c := range cases {
		req := httpPost(c.path)
		ep := classifyRequest(req)
		if ep.format != c.format || ep.model != c.model || ep.stream != c.stream {
			t.Errorf("%s: %+v", c.path, ep)
		}
	}
	if !strings.HasPrefix(formatNames[formatChat], "chat") {
		t.Fatal("format names")
	}
}
