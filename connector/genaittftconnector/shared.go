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

// getOrAdd returns one pipeline's hold on the connector built for key,
// creating the connector on first use.
func (s *sharedComponents) getOrAdd(key component.Config, create func() (*ttftConnector, error)) (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.comps[key]; ok {
		c.hold()
		return &instance{sharedComponent: c}, nil
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
	c.hold()
	return &instance{sharedComponent: c}, nil
}

// sharedComponent starts the shared connector once, and stops it once the
// last pipeline holding it stops: the collector shuts its nodes down in a
// topological order that does not order the traces→metrics, logs→metrics
// and metrics→metrics nodes of one connector among each other, so another
// pipeline (its batch processor's last batch) may still send after the
// first of them stopped. The metrics exporters come after all of them.
type sharedComponent struct {
	conn      *ttftConnector
	startOnce sync.Once
	mu        sync.Mutex
	refs      int
	remove    func()
}

func (c *sharedComponent) hold() {
	c.mu.Lock()
	c.refs++
	c.mu.Unlock()
}

// release drops one pipeline's hold; the last one stops the connector,
// which flushes.
func (c *sharedComponent) release(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs--; c.refs > 0 {
		return nil
	}
	err := c.conn.Shutdown(ctx)
	c.remove()
	return err
}

// instance is one pipeline's hold on the shared connector.
type instance struct {
	*sharedComponent
	stopOnce sync.Once
}

func (i *instance) Shutdown(ctx context.Context) error {
	var err error
	i.stopOnce.Do(func() { err = i.release(ctx) })
	return err
}

func (c *sharedComponent) Start(ctx context.Context, host component.Host) error {
	var err error
	c.startOnce.Do(func() { err = c.conn.Start(ctx, host) })
	return err
}

func (*sharedComponent) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

type tracesConnector struct{ *instance }

func (c *tracesConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return c.conn.ConsumeTraces(ctx, td)
}

type logsConnector struct{ *instance }

func (c *logsConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	return c.conn.ConsumeLogs(ctx, ld)
}
