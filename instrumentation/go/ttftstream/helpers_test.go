package ttftstream

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// step is one piece of a scripted response body: after wait, data arrives
// (delivered in reads of at most the reader's buffer), then err if set.
type step struct {
	wait time.Duration
	data string
	err  error
}

type scriptBody struct {
	clock  *fakeClock
	steps  []step
	waited bool
	closed bool
	maxRd  int // bytes per Read at most (0: no limit)
}

func (b *scriptBody) Read(p []byte) (int, error) {
	for len(b.steps) > 0 {
		s := &b.steps[0]
		if !b.waited {
			b.clock.advance(s.wait)
			b.waited = true
		}
		if len(s.data) > 0 {
			n := len(p)
			if b.maxRd > 0 && n > b.maxRd {
				n = b.maxRd
			}
			n = copy(p[:n], s.data)
			s.data = s.data[n:]
			return n, nil
		}
		err := s.err
		b.steps, b.waited = b.steps[1:], false
		if err != nil {
			return 0, err
		}
	}
	return 0, io.EOF
}

func (b *scriptBody) Close() error { b.closed = true; return nil }

type call struct {
	path    string
	body    string // request JSON
	status  int
	ctype   string
	steps   []step
	maxRd   int
	ctx     context.Context
	opts    []Option
	noClose bool
}

type result struct {
	read    []byte
	readErr error
	span    *fakeSpan
	spans   []*fakeSpan
	body    *scriptBody
	start   time.Time
	clock   *fakeClock
}

func run(t testing.TB, c call) result {
	t.Helper()
	clock := newFakeClock()
	tp, tr := newFakeProvider()
	opts := append([]Option{WithTracerProvider(tp)}, c.opts...)
	cfg := newConfig(opts)
	cfg.now = clock.now
	if c.status == 0 {
		c.status = 200
	}
	if c.ctype == "" {
		c.ctype = "text/event-stream"
	}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	sb := &scriptBody{clock: clock, steps: slices.Clone(c.steps), maxRd: c.maxRd}
	next := func(req *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("Content-Type", c.ctype)
		return &http.Response{StatusCode: c.status, Header: h, Body: sb, Request: req}, nil
	}
	u, _ := url.Parse("http://127.0.0.1:9/v1" + c.path)
	req, _ := http.NewRequestWithContext(c.ctx, http.MethodPost, u.String(), strings.NewReader(c.body))
	res := result{body: sb, start: clock.now(), clock: clock}
	resp, err := cfg.roundTrip(req, next)
	if err != nil {
		res.readErr = err
	} else {
		res.read, res.readErr = io.ReadAll(resp.Body)
		if !c.noClose {
			resp.Body.Close()
		}
	}
	res.spans = tr.all()
	if len(res.spans) > 0 {
		res.span = res.spans[0]
	}
	return res
}

// sse renders frames as an SSE stream: each frame is "event\x00data" or
// just data.
func sse(frames ...string) string {
	var b strings.Builder
	for _, f := range frames {
		if ev, data, ok := strings.Cut(f, "\x00"); ok {
			b.WriteString("event: " + ev + "\n")
			f = data
		}
		if strings.HasPrefix(f, ":") {
			b.WriteString(f + "\n\n")
			continue
		}
		b.WriteString("data: " + f + "\n\n")
	}
	return b.String()
}

func httpPost(path string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9"+path, strings.NewReader("{}"))
	return req
}
