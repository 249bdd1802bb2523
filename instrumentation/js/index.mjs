// ESM entry: the CommonJS module is the one implementation (no dual-package
// state to diverge).
import cjs from './index.cjs';

export const {
  instrumentFetch,
  EVENT_CHUNK,
  EVENT_HEADERS,
  ATTR,
  DEFAULT_EVENTS_BEFORE_CONTENT,
  DEFAULT_EVENTS_AFTER_CONTENT,
  MAX_CHUNK_EVENTS,
  SCOPE,
  VERSION,
} = cjs;
export default cjs;
