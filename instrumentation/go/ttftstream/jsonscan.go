package ttftstream

import "bytes"

// jscan walks one JSON value without building it: the classifiers look at a
// handful of keys per chunk, and decoding every chunk with encoding/json
// would cost more than the SDK's own read. It never recurses (skipping nests
// with a depth counter), never allocates, and on malformed input sets bad
// and stops advancing meaningfully; callers check bad at the end.
type jscan struct {
	b   []byte
	i   int
	bad bool
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// enter consumes open ('{' or '[') when it is next.
func (s *jscan) enter(open byte) bool {
	if s.bad || s.peek() != open {
		return false
	}
	s.i++
	return true
}

// more reports whether another member or element follows, consuming the
// separating comma; at close it consumes close and reports false.
func (s *jscan) more(close byte) bool {
	if s.bad {
		return false
	}
	switch s.peek() {
	case close:
		s.i++
		return false
	case ',':
		s.i++
		switch s.peek() {
		case close: // trailing comma: tolerated
			s.i++
			return false
		case 0: // cut after a comma: malformed
			s.bad = true
			return false
		}
		return true
	case 0:
		s.bad = true
		return false
	}
	return true
}

// key reads an object member's name and the colon after it; the name is
// raw (escapes are not decoded: provider keys are plain ASCII).
func (s *jscan) key() []byte {
	k, ok := s.str()
	if !ok || s.peek() != ':' {
		s.bad = true
		return nil
	}
	s.i++
	return k
}

// str reads a string and returns its raw bytes between the quotes.
func (s *jscan) str() ([]byte, bool) {
	if s.bad || s.peek() != '"' {
		s.bad = true
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j], true
		}
	}
	s.bad = true
	s.i = len(s.b)
	return nil, false
}

// strValue reads a string if one is next, else skips the value.
func (s *jscan) strValue() ([]byte, bool) {
	if s.peek() == '"' {
		return s.str()
	}
	s.skip()
	return nil, false
}

// skip steps over one value of any type.
func (s *jscan) skip() {
	switch c := s.peek(); c {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return
				}
			}
			s.i++
		}
		s.bad = true
	case 0:
		s.bad = true
	default:
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':' {
				break
			}
			s.i++
		}
		if s.i == start {
			s.bad = true
		}
	}
}

// nonEmpty steps over one value and reports whether it carries anything: a
// non-empty string, array or object, true, or a number.
func (s *jscan) nonEmpty() bool {
	c := s.peek()
	start := s.i
	s.skip()
	raw := s.b[start:s.i]
	if s.bad {
		// Cut off by the frame limit (classify's partial): what arrived of
		// a string, an array or an object is something.
		switch c {
		case '"':
			return len(raw) > 1
		case '[', '{':
			return len(bytes.TrimSpace(raw[1:])) > 0
		}
		return false
	}
	switch c {
	case '"':
		return len(raw) > 2
	case '[', '{':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
	case 'n', 'f':
		return false
	}
	return true
}

// isTrue steps over one value and reports whether it was the literal true.
func (s *jscan) isTrue() bool {
	c := s.peek()
	start := s.i
	s.skip()
	return c == 't' && !s.bad && string(s.b[start:s.i]) == "true"
}

// int reads a non-negative integer, else skips the value; ok is false for
// anything else (negative, fractional, huge, not a number).
func (s *jscan) int() (n int64, ok bool) {
	c := s.peek()
	start := s.i
	s.skip()
	if s.bad || c < '0' || c > '9' {
		return 0, false
	}
	for _, d := range s.b[start:s.i] {
		if d < '0' || d > '9' || n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}
