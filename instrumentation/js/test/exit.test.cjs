'use strict';
// No timer is left behind: a process that made calls with ten-minute limits
// through the real SDKs, one of them cut by its limit, exits as soon as its
// work is done.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { startFakeLLM } = require('./fakellm.cjs');

test('the process exits promptly after calls with long limits', { timeout: 60000 }, async (t) => {
  const llm = await startFakeLLM();
  try {
    const child = spawn(process.execPath, [path.join(__dirname, 'exit-child.cjs'), llm.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let kill;
    child.stdout.on('data', (d) => {
      stdout += d;
      // Its work is done: a process still there 5 s later is ended here.
      if (!kill && stdout.includes('\n')) kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    });
    child.stderr.on('data', (d) => { stderr += d; });
    const [code, sig] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    const exited = Date.now();
    clearTimeout(kill);
    assert.ok(stdout.includes('\n'), `no result from the child (exit ${code} ${sig}): ${stderr}`);
    const { at: done } = JSON.parse(stdout.trim().split('\n').pop());
    assert.equal(sig, null, `the process was still alive ${exited - done} ms after its work and had to be killed`);
    assert.equal(code, 0, stderr);
    const { at, out } = JSON.parse(stdout.trim().split('\n').pop());
    const lingered = exited - at;
    t.diagnostic(`exited ${lingered} ms after its last call returned; limits were ${600000} ms`);
    assert.ok(lingered < 2000, `the process lingered ${lingered} ms after its work`);
    const byCase = new Map(out.map((o) => [`${o.sdk}/${o.name}`, o]));
    for (const sdk of ['openai', 'anthropic', 'google-genai']) {
      assert.equal(byCase.get(`${sdk}/role_then_content`).end, 'completed', sdk);
      assert.equal(byCase.get(`${sdk}/stall`).end, 'timeout', sdk);
      assert.notEqual(byCase.get(`${sdk}/caller_abort`).end, 'timeout', sdk);
    }
  } finally {
    await llm.close();
  }
});
