// Package docstest reads the configuration docs/architecture.md §8 lists,
// so that each component's tests can check it against the component's
// defaults: a document that says one default while the code has another
// fails a test.
package docstest // import "github.com/otelcol-ttft/otelcol-ttft/internal/docstest"

import (
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
)

// section is the heading of the section that lists the stable keys.
const section = "## 8. Configuration"

// Component returns the configuration §8 lists for one component, key
// "processors::genai_ttft" and the like, read from the architecture
// document at path (docs/architecture.md, from the component's directory
// ../../docs/architecture.md). An error says the block or the component is
// missing.
func Component(path, key string) (*confmap.Conf, error) {
	cm, err := stableConfig(path)
	if err != nil {
		return nil, err
	}
	sub, err := cm.Sub(key)
	if err != nil {
		return nil, err
	}
	if len(sub.AllKeys()) == 0 {
		return nil, fmt.Errorf("%s: §8 lists no %s", path, key)
	}
	return sub, nil
}

// stableConfig returns the first YAML block of docs/architecture.md §8,
// read from the architecture document at path, as the collector reads a
// config file.
func stableConfig(path string) (*confmap.Conf, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc := string(b)
	i := strings.Index(doc, "\n"+section+"\n")
	if i < 0 {
		return nil, fmt.Errorf("%s: no section %q", path, section)
	}
	doc = doc[i+len(section)+2:]
	if j := strings.Index(doc, "\n## "); j >= 0 {
		doc = doc[:j]
	}
	const open, closing = "```yaml\n", "\n```"
	start := strings.Index(doc, open)
	if start < 0 {
		return nil, fmt.Errorf("%s: §8 has no yaml block", path)
	}
	block := doc[start+len(open):]
	end := strings.Index(block, closing)
	if end < 0 {
		return nil, fmt.Errorf("%s: §8's yaml block does not end", path)
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(block[:end]), &raw); err != nil {
		return nil, fmt.Errorf("%s: §8's yaml block: %w", path, err)
	}
	return confmap.NewFromStringMap(raw), nil
}
