'use strict';
// completeCut turns the start of a JSON text, cut at any character (an SSE
// event longer than the line limit), into JSON that parses and holds what
// arrived: open strings, arrays and objects are closed where they were cut,
// a string value keeps the characters that came, and a key, literal or
// number that was cut (or a key without its value) is left out. So a 2 MiB
// image part, cut at 1 MiB, is still a part with data: the classifier reads
// a cut event as far as it goes, as the Go package's scanner does.

const WS = new Set([' ', '\t', '\n', '\r']);

function completeCut(s) {
  // stack holds the open containers: '{' or '['. A safe point is a place
  // where the text so far, with the closers of the containers then open,
  // is JSON: after an opening bracket, or after a whole value. Between the
  // last safe point and the cut only containers open (a closer is a safe
  // point), so the stack below the safe point's depth is still the one it
  // had.
  const stack = [];
  let safe = -1; // end of the text at the last safe point (-1: none yet)
  let safeDepth = 0;
  let inString = false;
  let isKey = false; // the open string is an object's key
  let strStart = 0;
  let expectKey = false; // in an object, a key (or its closer) comes next
  let literal = -1; // start of a literal or number being read
  const mark = (end) => {
    safe = end;
    safeDepth = stack.length;
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === '\\') {
        i++; // the escaped character (a \u escape's digits are plain characters)
      } else if (c === '"') {
        inString = false;
        if (!isKey) mark(i + 1);
      }
      continue;
    }
    if (literal >= 0) {
      if (c === ',' || c === '}' || c === ']' || c === ':' || WS.has(c)) {
        literal = -1;
        mark(i);
      } else {
        continue;
      }
    }
    if (WS.has(c)) continue;
    switch (c) {
      case '"':
        inString = true;
        isKey = stack.length > 0 && stack[stack.length - 1] === '{' && expectKey;
        strStart = i;
        break;
      case '{':
        stack.push('{');
        expectKey = true;
        mark(i + 1);
        break;
      case '[':
        stack.push('[');
        expectKey = false;
        mark(i + 1);
        break;
      case '}':
      case ']':
        stack.pop();
        expectKey = false;
        mark(i + 1);
        break;
      case ':':
        expectKey = false;
        break;
      case ',':
        expectKey = stack.length > 0 && stack[stack.length - 1] === '{';
        break;
      default:
        literal = i;
    }
  }
  let text;
  let depth;
  if (inString && !isKey) {
    // A string value cut: close it after the last whole character.
    let end = s.length;
    const tail = s.slice(strStart + 1, end);
    const esc = tail.match(/\\(u[0-9a-fA-F]{0,3})?$/);
    if (esc && backslashesBefore(s, end - esc[0].length) % 2 === 0) end -= esc[0].length;
    text = s.slice(0, end) + '"';
    depth = stack.length;
  } else if (literal >= 0 && !inString && stack.length === 0) {
    text = s; // a bare number or literal: JSON.parse says whether it is whole
    depth = 0;
  } else {
    if (safe < 0) return undefined;
    text = s.slice(0, safe);
    depth = safeDepth;
  }
  let out = text.replace(/[\s,]*$/, '');
  for (let d = depth - 1; d >= 0; d--) {
    // A key whose value was cut is dropped at the safe point before it; a
    // dangling comma too (the replace above).
    out += stack[d] === '{' ? '}' : ']';
  }
  return out;
}

// backslashesBefore counts the backslashes that end s before index i.
function backslashesBefore(s, i) {
  let n = 0;
  while (i - 1 - n >= 0 && s[i - 1 - n] === '\\') n++;
  return n;
}

module.exports = { completeCut };
