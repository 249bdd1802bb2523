import type { Attributes, TracerProvider } from '@opentelemetry/api';

export interface InstrumentFetchOptions {
  /** The fetch to wrap (default: globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
  /** Provider of the spans started here (default: the global one). */
  tracerProvider?: TracerProvider;
  /** Overrides gen_ai.provider.name (default from the endpoint: openai, anthropic, gcp.gemini, gcp.vertex_ai for Claude on Vertex AI). */
  provider?: string;
  /** Added to every span started here, e.g. { 'ttft.route': 'support-chat' }. */
  attributes?: Attributes;
  /** ttft.chunk events recorded before the first content chunk, the first chunk among them (default 100). */
  eventsBeforeContent?: number;
  /** ttft.chunk events recorded after the first content chunk (default 0; negative: every chunk). */
  eventsAfterContent?: number;
  /**
   * Milliseconds from the fetch call within which a streamed call must deliver its first
   * content, reasoning or tool-call chunk (default: no limit). Past it the wrapper cuts the
   * call: before the headers the fetch rejects, after them the SDK's read fails, with a
   * DOMException named TimeoutError; the span gets ttft.stream.end=timeout, error.type=timeout
   * (derived outcome timeout_first_token). A number in (0, 2147483647]; anything else throws
   * a RangeError when wrapping.
   */
  firstTokenTimeoutMs?: number;
  /**
   * After the first content, the longest pause between non-keep-alive chunks (what
   * ttft.max_chunk_gap measures) before the wrapper cuts the stream the same way (derived
   * outcome timeout_idle; default: no limit). Time the app holds a chunk is not counted.
   * A number in (0, 2147483647]; anything else throws a RangeError when wrapping.
   */
  idleTimeoutMs?: number;
}

/** Returns a fetch that records the ttft.chunk contract for streamed LLM responses. */
export function instrumentFetch(options?: InstrumentFetchOptions): typeof globalThis.fetch;

export const EVENT_CHUNK: 'ttft.chunk';
export const EVENT_HEADERS: 'ttft.headers';
export const ATTR: {
  kind: 'ttft.chunk.kind';
  count: 'ttft.chunk.count';
  contentCount: 'ttft.chunk.content_count';
  maxGap: 'ttft.chunk.max_gap';
  unrecorded: 'ttft.chunk.unrecorded';
  end: 'ttft.stream.end';
  instrumentError: 'ttft.instrumentation.error';
};
export const DEFAULT_EVENTS_BEFORE_CONTENT: number;
export const DEFAULT_EVENTS_AFTER_CONTENT: number;
/** The most ttft.chunk events one call records, whatever the options say (the SDKs keep 128 a span, dropping the oldest). The constant stays 120: with OTEL_SPAN_EVENT_COUNT_LIMIT set below 128 when the fetch is wrapped, the bound a call applies is 8 fewer than that limit, at least 2 (the first chunk and the first content; a first error event comes on top). */
export const MAX_CHUNK_EVENTS: number;
export const SCOPE: string;
export const VERSION: string;
