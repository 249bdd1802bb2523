// Package sdktest runs ttftstream under the real Go LLM SDKs against a fake
// LLM server on loopback, and, with the built distribution, checks what the
// genai_ttft processor derives from the spans.
package sdktest
