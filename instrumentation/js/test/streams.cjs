'use strict';
// Helpers of the tests that feed the wrapper a stream piece by piece.
const { EVENT_CHUNK, ATTR } = require('../index.cjs');

const enc = new TextEncoder();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// kinds is the ttft.chunk.kind of each chunk event of a span, in order.
const kinds = (span) => span.events.filter((e) => e.name === EVENT_CHUNK).map((e) => e.attributes[ATTR.kind]);

// timedFetch answers with each [waitMs, text] piece after its wait.
function timedFetch(pieces, { status = 200, type = 'text/event-stream' } = {}) {
  return async () => {
    let i = 0;
    const stream = new ReadableStream({
      async pull(c) {
        if (i >= pieces.length) return c.close();
        const [wait, text] = pieces[i++];
        await sleep(wait);
        c.enqueue(enc.encode(text));
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { status, headers: { 'content-type': type } });
  };
}

module.exports = { sleep, kinds, timedFetch };
