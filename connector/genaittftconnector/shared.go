package genaittftconnector // import "github.com/otelcol-ttft/otelcol-ttft/connector/genaittftconnector"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// sharedComponents keeps one connector per configuration (the pattern of
// contrib's internal/sharedcomponent, which other modules cannot import).
type sharedComponents struct {
	mu    sync.Mutex
	comps map[component.Config]*sharedComponent
}

func newSharedComponents() *sharedComponents {
	return &sharedComponents{comps: map[component.Config]*sharedComponent{}}
}

// getOrAdd returns the connector built for key, creating it on first use.
func (s *sharedComponents) getOrAdd(key component.Config, create func() (*ttftConnector, error)) (*sharedComponent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.comps[key]; ok {
		return c, nil
	}
	conn, err := create()
	if err != nil {
		return nil, err
	}
	c := &sharedComponent{conn: conn}
	c.remove = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.comps[key] == c {
			delete(s.comps, key)
		}
	}
	s.comps[key] = c
	return c, nil
}

// sharedComponent starts and stops the shared connector once, however many
// pipelines hold it.
type sharedComponent struct {
	conn      *ttftConnector
	startOnce sync.Once
	stopOnce  sync.Once
	remove    func()
}

func (c *sharedComponent) Start(ctx context.Context, host component.Host) error {
	var err error
	c.startOnce.Do(func() { err = c.conn.Start(ctx, host) })
	return err
}

func (c *sharedComponent) Shutdown(ctx context.Context) error {
	var err error
	c.stopOnce.Do(func() {
		err = c.conn.Shutdown(ctx)
		c.remove()
	})
	return err
}

func (*sharedComponent) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

type tracesConnector struct{ *sharedComponent }

func (c *tracesConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return c.conn.ConsumeTraces(ctx, td)
}

type logsConnector struct{ *sharedComponent }

func (c *logsConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	return c.conn.ConsumeLogs(ctx, ld)
}
