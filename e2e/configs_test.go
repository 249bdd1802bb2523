package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// configEnv gives every environment variable a shipped config references a
// value a user might set. A config that references a variable missing here
// fails the test, so the README and this table stay complete.
var configEnv = map[string]string{
	"TTFT_GATEWAY_HOSTNAME":       "otelcol-ttft-gateway-trace-headless.observability.svc.cluster.local",
	"TTFT_AGGREGATOR_HOSTNAME":    "otelcol-ttft-gateway-aggregate-headless.observability.svc.cluster.local",
	"PROMETHEUS_REMOTE_WRITE_URL": "http://prometheus.monitoring.svc:9090/api/v1/write",
	"REMOTE_WRITE_TENANT":         "team-llm",
	"TRACES_OTLP_ENDPOINT":        "tempo.monitoring.svc:4317",
	"METRICS_OTLP_ENDPOINT":       "https://otlp.example.com",
	"METRICS_API_KEY":             "not-a-real-key",
	"BIFROST_METRICS_TARGET":      "bifrost.llm.svc:8080",
}

var envRef = regexp.MustCompile(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}`)

// shippedConfig is one collector configuration the repository ships.
type shippedConfig struct {
	name string // where it lives, for messages
	body []byte
}

// TestShippedConfigsValidate runs `otelcol-ttft validate` on every shipped
// configuration: config/*.yaml, config/examples/*.yaml and the configs
// embedded in the Kubernetes ConfigMaps.
func TestShippedConfigsValidate(t *testing.T) {
	bin := collectorBinary(t)
	configs := shippedConfigs(t)
	if len(configs) < 7 {
		t.Fatalf("found only %d shipped configs", len(configs))
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := os.Environ()
			for _, m := range envRef.FindAllSubmatch(c.body, -1) {
				name := string(m[1])
				v, ok := configEnv[name]
				if !ok {
					t.Errorf("%s references ${env:%s}: add it to configEnv and document it", c.name, name)
					continue
				}
				env = append(env, name+"="+v)
			}
			path := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(c.name))
			if err := os.WriteFile(path, c.body, 0o600); err != nil {
				t.Fatal(err)
			}
			// With the gates that retire deprecated layouts on: a config
			// written the deprecated way fails here before a release drops it.
			cmd := exec.Command(bin, "validate", "--config", path, "--feature-gates", retiringGates)
			cmd.Dir = root // relative paths in config/default.yaml are relative to the repository root
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("otelcol-ttft validate %s: %v\n%s", c.name, err, out)
			}
		})
	}
}

// TestConfigMapsEmbedTheConfigFiles checks that the Kubernetes ConfigMaps
// carry config/agent.yaml, config/gateway-trace.yaml and
// config/gateway-aggregate.yaml byte for byte, and that the workloads mount
// and run them.
func TestConfigMapsEmbedTheConfigFiles(t *testing.T) {
	for _, tc := range []struct{ manifest, key, kind string }{
		{"agent.yaml", "agent.yaml", "DaemonSet"},
		{"gateway-trace.yaml", "gateway-trace.yaml", "Deployment"},
		{"gateway-aggregate.yaml", "gateway-aggregate.yaml", "Deployment"},
	} {
		docs := manifestDocs(t, filepath.Join("..", "deploy", "kubernetes", tc.manifest))
		want, err := os.ReadFile(filepath.Join("..", "config", tc.key))
		if err != nil {
			t.Fatal(err)
		}
		var cmName string
		found := false
		for _, d := range docs {
			if d.Kind != "ConfigMap" {
				continue
			}
			got, ok := d.Data[tc.key]
			if !ok {
				continue
			}
			found, cmName = true, d.Metadata.Name
			if got != string(want) {
				t.Errorf("ConfigMap %s in deploy/kubernetes/%s differs from config/%s: copy the file into data.%s (indented by four spaces)",
					d.Metadata.Name, tc.manifest, tc.key, tc.key)
			}
		}
		if !found {
			t.Errorf("deploy/kubernetes/%s has no ConfigMap with data.%s", tc.manifest, tc.key)
			continue
		}
		var workload *k8sDoc
		for i := range docs {
			if docs[i].Kind == tc.kind {
				workload = &docs[i]
			}
		}
		if workload == nil {
			t.Errorf("deploy/kubernetes/%s has no %s", tc.manifest, tc.kind)
			continue
		}
		spec := workload.Spec.Template.Spec
		mounted := false
		for _, v := range spec.Volumes {
			if v.ConfigMap.Name == cmName {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s does not mount ConfigMap %s", tc.kind, cmName)
		}
		if len(spec.Containers) == 0 || !strings.Contains(strings.Join(spec.Containers[0].Args, " "), "/"+tc.key) {
			t.Errorf("%s does not run --config=.../%s", tc.kind, tc.key)
		}
		if spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
			t.Errorf("%s pod does not set runAsNonRoot", tc.kind)
		}
	}
	// Each load balancer resolves its tier's pods through a headless Service,
	// and every workload that sends to a tier is told its name.
	for _, tier := range []struct{ env, manifest string }{
		{"TTFT_GATEWAY_HOSTNAME", "gateway-trace.yaml"},
		{"TTFT_AGGREGATOR_HOSTNAME", "gateway-aggregate.yaml"},
	} {
		var headless bool
		for _, d := range manifestDocs(t, filepath.Join("..", "deploy", "kubernetes", tier.manifest)) {
			if d.Kind == "Service" && d.Spec.ClusterIP == "None" &&
				strings.HasPrefix(configEnv[tier.env], d.Metadata.Name+"."+d.Metadata.Namespace+".") {
				headless = true
			}
		}
		if !headless {
			t.Errorf("no headless Service in deploy/kubernetes/%s matches %s %s", tier.manifest, tier.env, configEnv[tier.env])
		}
		for _, m := range []string{"agent.yaml", "gateway-trace.yaml", "gateway-aggregate.yaml"} {
			cfg, err := os.ReadFile(filepath.Join("..", "config", m))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(cfg, []byte("${env:"+tier.env+"}")) {
				continue
			}
			raw, err := os.ReadFile(filepath.Join("..", "deploy", "kubernetes", m))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte("value: "+configEnv[tier.env])) {
				t.Errorf("deploy/kubernetes/%s does not set %s to %s", m, tier.env, configEnv[tier.env])
			}
		}
	}
}

// TestDockerfileShape checks what can be checked without a container engine:
// a multi-stage build with make build, a non-root runtime and the four ports.
// retiringGates turn off what the pinned components deprecate: the remote
// write exporter's top-level HTTP client settings (under http: since
// v0.158.0).
const retiringGates = "exporter.prometheusremotewritexporter.removeTopLevelHTTPSettings"

func TestDockerfileShape(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	for _, want := range []string{"FROM golang:1.26 AS build", "RUN make build", "COPY --from=build", "EXPOSE 4317 4318 8888 8889 13133",
		// file_storage's directory, writable by the non-root user.
		"install -d -o 65532 -g 65532 /var/lib/otelcol-ttft"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(df)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("Dockerfile must switch to a non-root USER, got %v", user)
	}
}

func shippedConfigs(t *testing.T) []shippedConfig {
	t.Helper()
	var out []shippedConfig
	for _, pattern := range []string{"config/*.yaml", "config/examples/*.yaml"} {
		paths, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(paths)
		for _, p := range paths {
			body, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, shippedConfig{name: strings.TrimPrefix(filepath.ToSlash(p), "../"), body: body})
		}
	}
	manifests, err := filepath.Glob(filepath.Join("..", "deploy", "kubernetes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		for _, d := range manifestDocs(t, m) {
			if d.Kind != "ConfigMap" {
				continue
			}
			keys := make([]string, 0, len(d.Data))
			for k := range d.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				out = append(out, shippedConfig{
					name: "deploy/kubernetes/" + filepath.Base(m) + ":" + d.Metadata.Name + ":" + k,
					body: []byte(d.Data[k]),
				})
			}
		}
	}
	return out
}

// k8sDoc is the part of a Kubernetes object these tests read.
type k8sDoc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		ClusterIP string `yaml:"clusterIP"`
		Template  struct {
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot *bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Containers []struct {
					Args []string `yaml:"args"`
				} `yaml:"containers"`
				Volumes []struct {
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func manifestDocs(t *testing.T, path string) []k8sDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var docs []k8sDoc
	for {
		var d k8sDoc
		if err := dec.Decode(&d); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if d.Kind == "" {
			t.Fatalf("%s: a document without kind", path)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestDashboardShape checks the Grafana dashboard's portability: a current
// schema, the data source as a variable used by every panel and query, and
// the template variables the panels filter on.
func TestDashboardShape(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "dashboards", "ttft.json"))
	if err != nil {
		t.Fatal(err)
	}
	type ds struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	var dash struct {
		SchemaVersion int `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *ds    `json:"datasource"`
			Targets    []struct {
				Datasource *ds    `json:"datasource"`
				Expr       string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d, want >= 39", dash.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range dash.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" {
		t.Errorf("want a datasource variable named datasource, got %v", vars)
	}
	for _, v := range []string{"provider", "model", "route", "band"} {
		if vars[v] != "query" {
			t.Errorf("template variable %s missing (have %v)", v, vars)
		}
	}
	ids := map[int]bool{}
	queries := 0
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || p.Datasource.Type != "prometheus" {
			t.Errorf("panel %q: datasource must be {prometheus, ${datasource}}, got %+v", p.Title, p.Datasource)
		}
		for _, q := range p.Targets {
			queries++
			if q.Datasource == nil || q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: a query does not use ${datasource}", p.Title)
			}
			for _, v := range []string{"$provider", "$model", "$route", "$band"} {
				if strings.HasPrefix(q.Expr, "ttft_target_band:") || strings.Contains(q.Expr, v) {
					continue
				}
				t.Errorf("panel %q: query ignores %s: %s", p.Title, v, q.Expr)
			}
		}
	}
	if queries < 15 {
		t.Errorf("only %d queries", queries)
	}
}

// TestRunScriptShowsSummaryAndStopsOnInterrupt runs scripts/run.sh (what
// `make run` runs) on config/default.yaml with free ports and a 1 s flush,
// waits for the summary, then interrupts the script's process group as
// Ctrl-C in a terminal would, and checks the collector went with it.
func TestRunScriptShowsSummaryAndStopsOnInterrupt(t *testing.T) {
	bin := collectorBinary(t)
	raw, err := os.ReadFile(filepath.Join("..", "config", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	metrics, health := freePort(t), freePort(t)
	cfg := strings.NewReplacer(
		"localhost:4317", fmt.Sprintf("localhost:%d", freePort(t)),
		"localhost:4318", fmt.Sprintf("localhost:%d", freePort(t)),
		"localhost:8889", fmt.Sprintf("localhost:%d", metrics),
		"localhost:13133", fmt.Sprintf("localhost:%d", health),
		"flush_interval: 15s", "flush_interval: 1s",
	).Replace(string(raw))
	for _, want := range []string{"localhost:4317", "localhost:4318", "localhost:8889", "localhost:13133", "flush_interval: 15s"} {
		if !strings.Contains(string(raw), want) {
			t.Fatalf("config/default.yaml no longer has %q, which this test and scripts/run.sh rely on", want)
		}
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "default.yaml")
	// No internal telemetry server: its default port may be taken here.
	if strings.Count(cfg, "\nservice:") != 1 {
		t.Fatal("config/default.yaml: want exactly one service block")
	}
	merged := strings.Replace(cfg, "\nservice:\n", "\nservice:\n  telemetry:\n    metrics:\n      level: none\n", 1)
	if err := os.WriteFile(cfgPath, []byte(merged), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("bash", "scripts/run.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(),
		"OTELCOL_TTFT_BIN="+bin, "CONFIG="+cfgPath, "RUN_DIR="+dir,
		fmt.Sprintf("METRICS_URL=http://localhost:%d/metrics", metrics),
		fmt.Sprintf("HEALTH_URL=http://localhost:%d/", health),
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})

	deadline := time.After(90 * time.Second)
	for !strings.Contains(out.String(), "FIRST_TOKEN") || !strings.Contains(out.String(), "chat-default") {
		select {
		case err := <-done:
			t.Fatalf("run.sh exited before a summary: %v\n%s", err, out.String())
		case <-deadline:
			t.Fatalf("no summary within 90s:\n%s", out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Logf("summary %s after start", time.Since(started).Round(100*time.Millisecond))

	// Ctrl-C: SIGINT to the whole foreground process group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("run.sh still running 20s after SIGINT:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "run: collector stopped") {
		t.Errorf("run.sh did not report stopping the collector:\n%s", out.String())
	}
	if err := httpOK(fmt.Sprintf("http://localhost:%d/", health))(); err == nil {
		t.Errorf("the collector still answers its health check after Ctrl-C")
	}
}
