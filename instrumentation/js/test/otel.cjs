'use strict';
// Test plumbing: an OTel SDK tracer provider with an in-memory exporter and,
// when the distribution is built, an OTLP/HTTP exporter to it.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn } = require('node:child_process');
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');

let contextManager;
function enableContext() {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    api.context.setGlobalContextManager(contextManager);
  }
}

function tracerProvider(extraProcessors = []) {
  enableContext();
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory), ...extraProcessors] });
  return { provider, memory };
}

// collectorBinary follows the e2e tests' rule: skipped when not built, a
// failure when TTFT_E2E=1 says it must be there.
function collectorBinary() {
  const bin = process.env.OTELCOL_TTFT_BIN || path.join(__dirname, '..', '..', '..', 'dist', 'otelcol-ttft');
  if (fs.existsSync(bin)) return path.resolve(bin);
  if (process.env.TTFT_E2E === '1') throw new Error(`distribution binary ${bin} not found (run make build)`);
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function startCollector(bin) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ttftstream-js-'));
  const port = await freePort();
  const out = path.join(dir, 'traces.json');
  const cfg = path.join(dir, 'config.yaml');
  fs.writeFileSync(cfg, `
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
processors:
  genai_ttft:
exporters:
  file:
    path: ${JSON.stringify(out)}
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [genai_ttft]
      exporters: [file]
`);
  const child = spawn(bin, ['--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let logs = '';
  child.stdout.on('data', (d) => { logs += d; });
  child.stderr.on('data', (d) => { logs += d; });
  const exited = new Promise((r) => child.on('exit', r));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      const r = await fetch(`${endpoint}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await r.arrayBuffer();
      if (r.ok) break;
    } catch { /* not listening yet */ }
    if (child.exitCode !== null) throw new Error(`collector exited:\n${logs}`);
    if (Date.now() > deadline) throw new Error(`collector not ready:\n${logs}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    logs: () => logs,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
    // spans returns the exported spans keyed by their test.case attribute.
    spans() {
      const byCase = new Map();
      if (!fs.existsSync(out)) return byCase;
      // The file exporter flushes its buffer as it fills, so the last line
      // can be half written: read only the lines a newline has ended.
      const text = fs.readFileSync(out, 'utf8');
      for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) {
        if (!line.trim()) continue;
        const doc = JSON.parse(line);
        for (const rs of doc.resourceSpans || []) {
          for (const ss of rs.scopeSpans || []) {
            for (const s of ss.spans || []) {
              const attrs = {};
              for (const a of s.attributes || []) {
                const v = a.value || {};
                if ('stringValue' in v) attrs[a.key] = v.stringValue;
                else if ('intValue' in v) attrs[a.key] = Number(v.intValue);
                else if ('doubleValue' in v) attrs[a.key] = v.doubleValue;
                else if ('boolValue' in v) attrs[a.key] = v.boolValue;
              }
              if (attrs['test.case']) byCase.set(attrs['test.case'], { name: s.name, start: BigInt(s.startTimeUnixNano), attrs });
            }
          }
        }
      }
      return byCase;
    },
  };
}

module.exports = { tracerProvider, collectorBinary, startCollector, BatchSpanProcessor };
