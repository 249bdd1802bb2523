import test from 'node:test';
import assert from 'node:assert/strict';
import { instrumentFetch, EVENT_CHUNK } from '../index.mjs';
import cjs from '../index.cjs';

test('ESM and CommonJS entries are the same module', () => {
  assert.equal(instrumentFetch, cjs.instrumentFetch);
  assert.equal(EVENT_CHUNK, 'ttft.chunk');
  assert.equal(typeof instrumentFetch({ fetch: async () => new Response('') }), 'function');
});
