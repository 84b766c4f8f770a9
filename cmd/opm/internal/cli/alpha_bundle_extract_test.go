package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fastopm/fastopm/internal/kubetest"
)

const (
	extractGolden = goldenRoot + "/golden/bundle-extract"
	extractSeeds  = goldenRoot + "/bundle-extract/seeds"
)

// extractCase is one line of testdata/golden/bundle-extract/cases.txt.
type extractCase struct {
	name, seed string
	env        []string
	args       string
}

func readExtractCases(t *testing.T) []extractCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(extractGolden, "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []extractCase
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("cases.txt: %q: want 4 tab-separated columns", line)
		}
		c := extractCase{name: f[0], seed: f[1], args: f[3]}
		if f[2] != "-" {
			c.env = strings.Split(f[2], ",")
		}
		cases = append(cases, c)
	}
	if len(cases) < 20 {
		t.Fatalf("cases.txt: only %d cases", len(cases))
	}
	return cases
}

// extractRun is a run of ours against a fresh fake API server.
type extractRun struct {
	server     *kubetest.Server
	kubeconfig string
	testdata   string
	stderr     string
	code       int
}

// clearExtractEnv empties every variable extract reads, so that the
// environment of whoever runs the tests does not count.
func clearExtractEnv(t *testing.T) {
	for _, k := range []string{"KUBECONFIG", "CONTAINER_IMAGE", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"} {
		t.Setenv(k, "")
	}
}

func seedServer(t *testing.T, s *kubetest.Server, seed string) {
	t.Helper()
	if seed == "-" {
		return
	}
	b, err := os.ReadFile(filepath.Join(extractSeeds, seed+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJSON(b); err != nil {
		t.Fatal(err)
	}
}

// runExtractCase runs one case through opm's command line, with the
// server wrapped by wrap (when not nil).
func runExtractCase(t *testing.T, c extractCase, wrap func(*kubetest.Server) http.Handler) *extractRun {
	t.Helper()
	clearExtractEnv(t)
	s := kubetest.New()
	seedServer(t, s, c.seed)
	var h http.Handler = s
	if wrap != nil {
		h = wrap(s)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, kubetest.Kubeconfig(srv.URL, nil, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	td, err := filepath.Abs(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, strings.ReplaceAll(v, "{kubeconfig}", kc))
	}
	args := strings.Fields(strings.NewReplacer("{testdata}", td, "{kubeconfig}", kc).Replace(c.args))
	var out, errb bytes.Buffer
	code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"alpha", "bundle", "extract"}, args...))
	if out.Len() != 0 {
		t.Errorf("stdout: %q, want nothing", out.String())
	}
	return &extractRun{server: s, kubeconfig: kc, testdata: td, stderr: errb.String(), code: code}
}

var logTime = regexp.MustCompile(`(?m)^time="[^"]*"`)

// normalized is the run's standard error as record.sh writes upstream's:
// times as T, paths as placeholders, cobra's usage cut, then "exit N".
func (r *extractRun) normalized() string {
	s := logTime.ReplaceAllString(r.stderr, `time="T"`)
	s = strings.NewReplacer(r.testdata, "{testdata}", r.kubeconfig, "{kubeconfig}").Replace(s)
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, "Usage:") {
			break
		}
		b.WriteString(line)
	}
	return b.String() + "exit " + strconv.Itoa(r.code) + "\n"
}

// stored is every ConfigMap the server holds, as record.sh prints them.
func (r *extractRun) stored() string {
	var b strings.Builder
	for _, k := range r.server.Keys() {
		ns, name, _ := strings.Cut(k, "/")
		b.Write(r.server.Normalized(ns, name))
	}
	return b.String()
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(extractGolden, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// insertAfterFirstLine puts line after the first line of s.
func insertAfterFirstLine(s, line string) string {
	first, rest, _ := strings.Cut(s, "\n")
	return first + "\n" + line + "\n" + rest
}

// TestBundleExtractGolden runs every case upstream's extract was recorded
// on and checks that ours stores the same ConfigMaps, logs the same lines
// and ends with the same exit code. The cases where ours differs on
// purpose (it creates a ConfigMap that does not exist, where upstream
// fails) are checked against what upstream stores when the ConfigMap
// exists.
func TestBundleExtractGolden(t *testing.T) {
	for _, c := range readExtractCases(t) {
		t.Run(c.name, func(t *testing.T) {
			r := runExtractCase(t, c, nil)
			wantStored, wantStderr := readGolden(t, c.name+".json"), readGolden(t, c.name+".stderr")
			switch c.name {
			case "configmap-missing":
				// Upstream: `configmaps "cm" not found`, nothing stored.
				if !strings.Contains(wantStderr, `configmaps "cm" not found`) || wantStored != "" {
					t.Fatalf("the golden no longer shows upstream's failure:\n%s", wantStderr)
				}
				wantStored = readGolden(t, "configmap-bare.json")
				wantStderr = insertAfterFirstLine(readGolden(t, "configmap-bare.stderr"), `time="T" level=info msg="configmap olm/cm not found: creating it"`)
			case "other-name":
				// Upstream: `configmaps "other" not found`, cm unchanged.
				if wantStored != readSeedNormalized(t, "bare") || !strings.Contains(wantStderr, `configmaps "other" not found`) {
					t.Fatalf("the golden no longer shows upstream's failure:\n%s", wantStderr)
				}
				// Ours keeps cm as it was and creates other as upstream
				// fills a bare ConfigMap.
				wantStored += strings.Replace(readGolden(t, "datalimit-exact.json"), `"name": "cm"`, `"name": "other"`, 1)
				wantStderr = insertAfterFirstLine(readGolden(t, "datalimit-exact.stderr"), `time="T" level=info msg="configmap olm/other not found: creating it"`)
			}
			if got := r.stored(); got != wantStored {
				t.Errorf("stored ConfigMaps differ from upstream's\n got: %s\nwant: %s", got, wantStored)
			}
			if got := r.normalized(); got != wantStderr {
				t.Errorf("stderr differs from upstream's\n got: %s\nwant: %s", got, wantStderr)
			}
			if r.code != 0 && c.seed != "-" {
				// Nothing half-written: the seed is as it was.
				seedOnly := kubetest.New()
				seedServer(t, seedOnly, c.seed)
				for _, k := range seedOnly.Keys() {
					ns, name, _ := strings.Cut(k, "/")
					if got, want := r.server.Normalized(ns, name), seedOnly.Normalized(ns, name); !bytes.Equal(got, want) {
						t.Errorf("%s changed by a failed run:\n%s", k, got)
					}
				}
			}
		})
	}
}

// extractCaseNamed returns the case of cases.txt called name.
func extractCaseNamed(t *testing.T, name string) extractCase {
	t.Helper()
	for _, c := range readExtractCases(t) {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return extractCase{}
}

// TestBundleExtractRequests checks what ours sends: a GET then a PUT of
// the ConfigMap, in protobuf, accepting protobuf or JSON, as upstream's
// client-go typed client does.
func TestBundleExtractRequests(t *testing.T) {
	r := runExtractCase(t, extractCaseNamed(t, "hyperfoil-bundle-0.26.0-z"), nil)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := r.server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	const proto, accept = "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf,application/json"
	for i, want := range []kubetest.Request{
		{Method: "GET", Path: "/api/v1/namespaces/olm/configmaps/cm", Accept: accept},
		{Method: "PUT", Path: "/api/v1/namespaces/olm/configmaps/cm", ContentType: proto, Accept: accept},
	} {
		got := reqs[i]
		if got.Method != want.Method || got.Path != want.Path || got.ContentType != want.ContentType || got.Accept != want.Accept {
			t.Errorf("request %d: %s %s (content type %q, accept %q), want %s %s (%q, %q)", i,
				got.Method, got.Path, got.ContentType, got.Accept, want.Method, want.Path, want.ContentType, want.Accept)
		}
	}
	if !bytes.HasPrefix(reqs[1].Body, []byte("k8s\x00")) {
		t.Errorf("PUT body is not in Kubernetes' protobuf envelope: %q", reqs[1].Body[:min(16, len(reqs[1].Body))])
	}
}

// TestBundleExtractInCluster runs extract as OLM's Job does, with no
// kubeconfig: the API server from KUBERNETES_SERVICE_HOST and _PORT over
// TLS, trusted through the service account's ca.crt, with its token.
func TestBundleExtractInCluster(t *testing.T) {
	const token = "service-account-token"
	setup := func(t *testing.T, writeCA, writeToken bool) (*kubetest.Server, string) {
		clearExtractEnv(t)
		s := kubetest.New()
		s.Token = token
		seedServer(t, s, "olm-fresh")
		srv := httptest.NewUnstartedServer(s)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the no-CA case's handshake errors
		srv.StartTLS()
		t.Cleanup(srv.Close)
		host, port, err := splitHostPort(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBERNETES_SERVICE_HOST", host)
		t.Setenv("KUBERNETES_SERVICE_PORT", port)
		t.Setenv("CONTAINER_IMAGE", "quay.io/community/hyperfoil-bundle:v0.26.0")
		dir := t.TempDir()
		if writeCA {
			if err := os.WriteFile(filepath.Join(dir, "ca.crt"), kubetest.CertPEM(srv), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if writeToken {
			if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		old := serviceAccountDir
		serviceAccountDir = dir
		t.Cleanup(func() { serviceAccountDir = old })
		return s, dir
	}
	td, err := filepath.Abs(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"alpha", "bundle", "extract", "-m", td + "/bundles/hyperfoil-bundle-0.26.0/", "-n", "olm", "-c", "cm", "-z"}
	run := func() (string, int) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args)
		return errb.String(), code
	}

	t.Run("ok", func(t *testing.T) {
		s, _ := setup(t, true, true)
		stderr, code := run()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, `level=info msg="Using in-cluster kube client config"`) {
			t.Errorf("stderr does not say the in-cluster configuration is used:\n%s", stderr)
		}
		if got, want := string(s.Normalized("olm", "cm")), readGolden(t, "hyperfoil-bundle-0.26.0-z.json"); got != want {
			t.Errorf("stored ConfigMap differs from upstream's\n got: %s\nwant: %s", got, want)
		}
		for _, r := range s.Requests() {
			if r.Authorization != "Bearer "+token {
				t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Authorization)
			}
		}
	})
	t.Run("no token", func(t *testing.T) {
		_, dir := setup(t, true, false)
		stderr, code := run()
		want := `level=fatal msg="cluster config failed: Cannot load config for REST client: open ` + filepath.Join(dir, "token") + `: no such file or directory"`
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %s", code, stderr, want)
		}
	})
	t.Run("no CA", func(t *testing.T) {
		s, dir := setup(t, false, true)
		stderr, code := run()
		wantLog := `level=error msg="Expected to load root CA config from ` + filepath.Join(dir, "ca.crt")
		if code != 1 || !strings.Contains(stderr, wantLog) || !strings.Contains(stderr, "Error: error loading manifests from directory: ") ||
			!strings.Contains(stderr, "certificate") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1, %s and a certificate error", code, stderr, wantLog)
		}
		if n := len(s.Requests()); n != 0 {
			t.Errorf("%d requests reached the server through an untrusted certificate", n)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		s, dir := setup(t, true, true)
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte("other"), 0o600); err != nil {
			t.Fatal(err)
		}
		stderr, code := run()
		if code != 1 || !strings.Contains(stderr, "Error: error loading manifests from directory: Unauthorized") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if got, want := string(s.Normalized("olm", "cm")), readSeedNormalized(t, "olm-fresh"); got != want {
			t.Errorf("ConfigMap changed:\n%s", got)
		}
	})
}

func readSeedNormalized(t *testing.T, seed string) string {
	t.Helper()
	s := kubetest.New()
	seedServer(t, s, seed)
	k := s.Keys()[0]
	ns, name, _ := strings.Cut(k, "/")
	return string(s.Normalized(ns, name))
}

func splitHostPort(url string) (string, string, error) {
	hp := strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://")
	i := strings.LastIndexByte(hp, ':')
	if i < 0 {
		return "", "", os.ErrInvalid
	}
	return hp[:i], hp[i+1:], nil
}

// TestBundleExtractRaces checks the retries ours adds: a ConfigMap changed
// between our GET and PUT (409 Conflict), and one created between our GET
// (404) and POST (409 AlreadyExists), end as upstream's run without the
// race; a conflict that never ends gives up after 5 writes.
func TestBundleExtractRaces(t *testing.T) {
	c := extractCaseNamed(t, "hyperfoil-bundle-0.26.0-z")
	seed, err := os.ReadFile(filepath.Join(extractSeeds, "olm-fresh.json"))
	if err != nil {
		t.Fatal(err)
	}
	// meddle calls f before the request number n (from 1) of method
	// reaches the server (every one from n when always).
	meddle := func(method string, n int, always bool, f func(*kubetest.Server)) func(*kubetest.Server) http.Handler {
		return func(s *kubetest.Server) http.Handler {
			var mu sync.Mutex
			seen := 0
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == method {
					mu.Lock()
					seen++
					if seen == n || always && seen > n {
						f(s)
					}
					mu.Unlock()
				}
				s.ServeHTTP(w, r)
			})
		}
	}
	reput := func(s *kubetest.Server) {
		if err := s.PutJSON(seed); err != nil {
			t.Error(err)
		}
	}
	count := func(s *kubetest.Server, method string) int {
		n := 0
		for _, r := range s.Requests() {
			if r.Method == method {
				n++
			}
		}
		return n
	}
	want := readGolden(t, "hyperfoil-bundle-0.26.0-z.json")

	t.Run("conflict once", func(t *testing.T) {
		r := runExtractCase(t, c, meddle("PUT", 1, false, reput))
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if got := string(r.server.Normalized("olm", "cm")); got != want {
			t.Errorf("stored\n%s\nwant\n%s", got, want)
		}
		if n := count(r.server, "PUT"); n != 2 {
			t.Errorf("%d PUTs, want 2", n)
		}
		if !strings.Contains(r.stderr, `msg="retrying: Operation cannot be fulfilled on configmaps \"cm\"`) {
			t.Errorf("stderr does not show the retry:\n%s", r.stderr)
		}
	})
	t.Run("created in between", func(t *testing.T) {
		c := c
		c.seed = "-"
		r := runExtractCase(t, c, meddle("POST", 1, false, reput))
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if got := string(r.server.Normalized("olm", "cm")); got != want {
			t.Errorf("stored\n%s\nwant\n%s", got, want)
		}
		if p, u := count(r.server, "POST"), count(r.server, "PUT"); p != 1 || u != 1 {
			t.Errorf("%d POSTs and %d PUTs, want 1 and 1", p, u)
		}
	})
	t.Run("conflict forever", func(t *testing.T) {
		r := runExtractCase(t, c, meddle("PUT", 1, true, reput))
		if r.code != 1 || !strings.Contains(r.stderr, `Error: error loading manifests from directory: Operation cannot be fulfilled on configmaps "cm"`) {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if n := count(r.server, "PUT"); n != 5 {
			t.Errorf("%d PUTs, want 5", n)
		}
		if got, want := string(r.server.Normalized("olm", "cm")), readSeedNormalized(t, "olm-fresh"); got != want {
			t.Errorf("ConfigMap changed:\n%s", got)
		}
	})
}

// TestBundleExtractFiles covers files the recorded cases cannot hold in
// git: links, and a named pipe, which ours refuses (upstream blocks on it
// forever).
func TestBundleExtractFiles(t *testing.T) {
	mk := func(t *testing.T) string {
		dir := t.TempDir()
		for _, d := range []string{"manifests", "metadata"} {
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "real.yaml"), []byte("kind: Real\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	run := func(t *testing.T, dir string) *extractRun {
		return runExtractCase(t, extractCase{name: "files", seed: "bare", args: "-m " + dir + "/ -n olm -c cm -k {kubeconfig}"}, nil)
	}
	t.Run("link to a file", func(t *testing.T) {
		dir := mk(t)
		if err := os.Symlink(filepath.Join(dir, "real.yaml"), filepath.Join(dir, "manifests", "link.yaml")); err != nil {
			t.Fatal(err)
		}
		r := run(t, dir)
		cm := r.server.Get("olm", "cm")
		if r.code != 0 || cm.Data["link.yaml"] != "kind: Real\n" {
			t.Errorf("exit %d, data %v: %s", r.code, cm.Data, r.stderr)
		}
	})
	t.Run("dangling link", func(t *testing.T) {
		dir := mk(t)
		p := filepath.Join(dir, "manifests", "gone.yaml")
		if err := os.Symlink(filepath.Join(dir, "missing.yaml"), p); err != nil {
			t.Fatal(err)
		}
		r := run(t, dir)
		want := "Error: error loading manifests from directory: open " + p + ": no such file or directory\n"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant %s", r.code, r.stderr, want)
		}
	})
	t.Run("link to a directory", func(t *testing.T) {
		dir := mk(t)
		p := filepath.Join(dir, "metadata", "sub")
		if err := os.Symlink(filepath.Join(dir, "manifests"), p); err != nil {
			t.Fatal(err)
		}
		r := run(t, dir)
		want := "Error: error loading manifests from directory: read " + p + ": is a directory\n"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant %s", r.code, r.stderr, want)
		}
	})
	t.Run("named pipe", func(t *testing.T) {
		dir := mk(t)
		p := filepath.Join(dir, "manifests", "pipe.yaml")
		if err := mkfifo(p); errors.Is(err, errors.ErrUnsupported) {
			t.Skip("no named pipes here")
		} else if err != nil {
			t.Fatal(err)
		}
		r := run(t, dir)
		want := "Error: error loading manifests from directory: read " + p + ": not a regular file (named pipe)\n"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant %s", r.code, r.stderr, want)
		}
	})
}
