package ttftstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
)

// frameAt is one SSE frame the loopback server writes at its time after the
// request arrived.
type frameAt struct {
	at   time.Duration
	data string
}

// limitServer serves one stream: headers at headersAt, the frames at their
// times, then it holds the stream open until the client goes away (end:
// false) or ends it.
func limitServer(t *testing.T, headersAt time.Duration, frames []frameAt, end bool, ctype string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go away
		wait := func(at time.Duration) bool {
			select {
			case <-time.After(time.Until(arrived.Add(at))):
				return true
			case <-r.Context().Done():
				return false
			}
		}
		if !wait(headersAt) {
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, f := range frames {
			if !wait(f.at) {
				return
			}
			_, _ = io.WriteString(w, f.data)
			w.(http.Flusher).Flush()
		}
		if !end {
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type limitResult struct {
	read    string
	err     error // from Do or from reading the body
	elapsed time.Duration
	span    *fakeSpan
}

func limitCall(t *testing.T, srv *httptest.Server, ctx context.Context, reqBody string, opts ...Option) limitResult {
	t.Helper()
	tp, tr := newFakeProvider()
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	hc := WrapClient(&http.Client{Transport: base}, append([]Option{WithTracerProvider(tp)}, opts...)...)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(reqBody))
	start := time.Now()
	var res limitResult
	resp, err := hc.Do(req)
	if err == nil {
		var b []byte
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		res.read = string(b)
	}
	res.err, res.elapsed = err, time.Since(start)
	if spans := tr.all(); len(spans) == 1 {
		res.span = spans[0]
	} else {
		t.Fatalf("%d spans", len(spans))
	}
	return res
}

func checkCut(t *testing.T, r limitResult, limit time.Duration) {
	t.Helper()
	if !errors.Is(r.err, ErrFirstTokenTimeout) {
		t.Fatalf("error %v, want ErrFirstTokenTimeout", r.err)
	}
	var ne net.Error
	if !errors.As(r.err, &ne) || !ne.Timeout() {
		t.Errorf("%v is not a net.Error timeout", r.err)
	}
	if r.elapsed < limit || r.elapsed > limit+300*time.Millisecond {
		t.Errorf("cut after %v, limit %v", r.elapsed, limit)
	}
	s := r.span
	if got := s.attr(AttrStreamEnd).AsString(); got != endTimeout {
		t.Errorf("end = %q, want %q", got, endTimeout)
	}
	if got := s.attr("error.type").AsString(); got != "timeout" {
		t.Errorf("error.type = %q, want timeout", got)
	}
	if s.status != codes.Error || s.ended != 1 {
		t.Errorf("status %v, ended %d times", s.status, s.ended)
	}
}

func TestFirstTokenTimeout(t *testing.T) {
	const limit = 150 * time.Millisecond
	stream := `{"model":"m","stream":true}`
	t.Run("cut after the headers; what was read stays", func(t *testing.T) {
		frames := []frameAt{{10 * time.Millisecond, sse(chatRole)}, {30 * time.Millisecond, sse(": keep-alive")}}
		r := limitCall(t, limitServer(t, 0, frames, false, "text/event-stream"), context.Background(), stream, WithFirstTokenTimeout(limit))
		checkCut(t, r, limit)
		if want := sse(chatRole) + sse(": keep-alive"); r.read != want {
			t.Errorf("read %q, want %q", r.read, want)
		}
		if got := r.span.chunkKinds(); strings.Join(got, ",") != "role,keepalive" {
			t.Errorf("events %v", got)
		}
	})
	t.Run("cut before the headers", func(t *testing.T) {
		r := limitCall(t, limitServer(t, 2*time.Second, nil, false, "text/event-stream"), context.Background(), stream, WithFirstTokenTimeout(limit))
		checkCut(t, r, limit)
	})
	t.Run("content in time stops the timer", func(t *testing.T) {
		frames := []frameAt{{10 * time.Millisecond, sse(chatRole)}, {50 * time.Millisecond, sse(chatContent("a"))},
			{300 * time.Millisecond, sse(chatContent("b"))}, {310 * time.Millisecond, sse("[DONE]")}}
		r := limitCall(t, limitServer(t, 0, frames, true, "text/event-stream"), context.Background(), stream, WithFirstTokenTimeout(limit))
		if r.err != nil {
			t.Fatalf("error %v: the limit cut a stream past its first content", r.err)
		}
		if got := r.span.attr(AttrStreamEnd).AsString(); got != endCompleted {
			t.Errorf("end = %q", got)
		}
	})
	t.Run("the caller's cancel wins", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(40*time.Millisecond, cancel)
		r := limitCall(t, limitServer(t, 0, []frameAt{{10 * time.Millisecond, sse(chatRole)}}, false, "text/event-stream"), ctx, stream, WithFirstTokenTimeout(limit))
		if !errors.Is(r.err, context.Canceled) || errors.Is(r.err, ErrFirstTokenTimeout) {
			t.Fatalf("error %v, want context.Canceled", r.err)
		}
		time.Sleep(limit)
		if got := r.span.attr(AttrStreamEnd).AsString(); got != endCanceled {
			t.Errorf("end = %q, want %q", got, endCanceled)
		}
	})
	t.Run("the caller's deadline wins", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
		defer cancel()
		r := limitCall(t, limitServer(t, 0, []frameAt{{10 * time.Millisecond, sse(chatRole)}}, false, "text/event-stream"), ctx, stream, WithFirstTokenTimeout(limit))
		if !errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, ErrFirstTokenTimeout) {
			t.Fatalf("error %v, want context.DeadlineExceeded", r.err)
		}
		if got := r.span.attr("error.type").AsString(); got != "timeout" {
			t.Errorf("error.type = %q", got)
		}
	})
	t.Run("no limit for a call that asked for no stream", func(t *testing.T) {
		frames := []frameAt{{300 * time.Millisecond, `{"choices":[{"message":{"content":"hi"}}]}`}}
		r := limitCall(t, limitServer(t, 0, frames, true, "application/json"), context.Background(), `{"model":"m"}`, WithFirstTokenTimeout(limit))
		if r.err != nil {
			t.Fatal(r.err)
		}
	})
	t.Run("none for a JSON answer, once the headers are in", func(t *testing.T) {
		frames := []frameAt{{300 * time.Millisecond, `{"choices":[]}`}}
		r := limitCall(t, limitServer(t, 0, frames, true, "application/json"), context.Background(), stream, WithFirstTokenTimeout(limit))
		if r.err != nil {
			t.Fatal(r.err)
		}
	})
	t.Run("d <= 0 is no limit", func(t *testing.T) {
		for _, d := range []time.Duration{0, -time.Second} {
			if c := newConfig([]Option{WithFirstTokenTimeout(time.Second), WithFirstTokenTimeout(d)}); c.firstToken != 0 {
				t.Errorf("WithFirstTokenTimeout(%v): %v", d, c.firstToken)
			}
		}
		frames := []frameAt{{10 * time.Millisecond, sse(chatRole)}, {250 * time.Millisecond, sse("[DONE]")}}
		r := limitCall(t, limitServer(t, 0, frames, true, "text/event-stream"), context.Background(), stream, WithFirstTokenTimeout(0))
		if r.err != nil {
			t.Fatal(r.err)
		}
	})
}
