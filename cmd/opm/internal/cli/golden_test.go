package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

const goldenRoot = "../../../../testdata"

// run runs opm with args and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args)
	return code, out.String(), errb.String()
}

// goldenDigests reads a golden directory's sha256.txt.
func goldenDigests(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums, err := testutil.GoldenDigests(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// canonicalLines turns a JSON stream into the golden render.jsonl form.
func canonicalLines(t *testing.T, stream []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(stream))
	dec.UseNumber()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("render output is not a JSON stream: %v", err)
		}
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// renderJSONNondeterministic lists catalogs whose upstream render.json was
// recorded in an order upstream does not fix (duplicate channel names sort
// randomly); their render.jsonl still pins the content.
var renderJSONNondeterministic = map[string]bool{"fixture-olm-magiccatalog-duplicate-package": true}

func goldenCatalogs(t *testing.T) []string {
	dirs, err := filepath.Glob(filepath.Join(goldenRoot, "golden", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden catalogs in %s", goldenRoot)
	}
	var names []string
	for _, d := range dirs {
		// Other goldens (templates/) live beside the catalogs' ones.
		if st, err := os.Stat(filepath.Join(goldenRoot, "catalogs", filepath.Base(d))); err != nil || !st.IsDir() {
			continue
		}
		names = append(names, filepath.Base(d))
	}
	return names
}

func TestRenderMatchesUpstreamGolden(t *testing.T) {
	for _, name := range goldenCatalogs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gdir := filepath.Join(goldenRoot, "golden", name)
			code, out, stderr := run(t, "render", filepath.Join(goldenRoot, "catalogs", name))
			if code != 0 {
				t.Fatalf("render exit %d: %s", code, stderr)
			}
			sums := goldenDigests(t, gdir)
			if want, ok := sums["render.json"]; ok && !renderJSONNondeterministic[name] {
				if got := digest([]byte(out)); got != want {
					dumpOutput(t, name+".render.json", out)
					t.Errorf("render -o json bytes differ from upstream (sha256 %s, want %s)", got, want)
				}
			}
			if want, ok := sums["render.jsonl"]; ok {
				if got := digest(canonicalLines(t, []byte(out))); got != want {
					t.Errorf("render content differs from upstream's render.jsonl (sha256 %s, want %s)", got, want)
				}
			}
		})
	}
}

// dumpOutput keeps a mismatching output for inspection when
// OPM_GOLDEN_DUMP names a directory.
func dumpOutput(t *testing.T, name, data string) {
	if dir := os.Getenv("OPM_GOLDEN_DUMP"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
		t.Logf("output written to %s", filepath.Join(dir, name))
	}
}

var logrusLine = regexp.MustCompile(`^time="[^"]*" level=(\w+) msg=("(?:[^"\\]|\\.)*"|\S*)(.*)$`)

// normalizeLog turns opm's log output into the golden validate.txt form:
// each logrus line becomes its message.
func normalizeLog(t *testing.T, s string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if m := logrusLine.FindStringSubmatch(line); m != nil {
			msg := m[2]
			if strings.HasPrefix(msg, `"`) {
				var err error
				if msg, err = strconv.Unquote(msg); err != nil {
					t.Fatalf("bad log line %q: %v", line, err)
				}
			}
			lines = append(lines, strings.Split(msg, "\n")...)
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

func TestValidateMatchesUpstreamVerdict(t *testing.T) {
	for _, name := range goldenCatalogs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(goldenRoot, "golden", name, "validate.txt"))
			if err != nil {
				t.Fatal(err)
			}
			wantLines := strings.Split(strings.TrimRight(string(want), "\n"), "\n")
			code, _, stderr := run(t, "validate", filepath.Join(goldenRoot, "catalogs", name))
			verdict := "passed"
			if code != 0 {
				verdict = "failed"
			}
			if got := []string{verdict, "exit=" + strconv.Itoa(code)}; got[0] != wantLines[0] || got[1] != wantLines[1] {
				t.Fatalf("verdict %v, upstream %v (stderr: %s)", got, wantLines[:2], stderr)
			}
			// Every line upstream prints about the catalog appears in our
			// report (which may hold more problems than upstream's first).
			var errLines []string
			for _, l := range normalizeLog(t, stderr) {
				if !strings.Contains(l, "level=warning") {
					errLines = append(errLines, l)
				}
			}
			joined := strings.Join(errLines, "\n")
			for _, l := range wantLines[2:] {
				if !strings.Contains(joined, l) {
					t.Errorf("upstream's %q is missing from our report:\n%s", l, joined)
				}
			}
		})
	}
}

func TestValidateJSONOutput(t *testing.T) {
	code, out, _ := run(t, "validate", "-o", "json", filepath.Join(goldenRoot, "catalogs", "fixture-olm-magiccatalog-duplicate-package"))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var res struct {
		Passed bool `json:"passed"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
		Problems []struct {
			Rule    string `json:"rule"`
			File    string `json:"file"`
			Line    int    `json:"line"`
			Package string `json:"package"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if res.Passed || res.Error.Message != `duplicate package "test-package"` {
		t.Fatalf("got %+v", res)
	}
	if len(res.Problems) != 1 || res.Problems[0].Rule != "duplicate-package" || res.Problems[0].File == "" || res.Problems[0].Line == 0 || res.Problems[0].Package != "test-package" {
		t.Fatalf("problems %+v", res.Problems)
	}
	if !strings.HasPrefix(out, "{\n  \"passed\": false,\n  \"error\": {\n    \"message\":") {
		t.Fatalf("upstream's layout changed:\n%s", out)
	}

	code, out, _ = run(t, "validate", "-o", "yaml", filepath.Join(goldenRoot, "example"))
	if code != 0 || !strings.HasPrefix(out, "passed: true\n") {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

// A command line that does not parse is reported as cobra reports it for
// upstream: "Error: ..." and the command's usage on stderr, exit 1.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		err   string
		usage string
	}{
		{[]string{"validate"}, "accepts 1 arg(s), received 0", "opm validate <directory> [flags]"},
		{[]string{"render", "--bogus"}, "unknown flag: --bogus", "opm render [catalog-image"},
		{[]string{"serve", "a", "b"}, "accepts 1 arg(s), received 2", "opm serve <source_path> [flags]"},
		{[]string{"bogus"}, `unknown command "bogus" for "opm"`, "Available Commands:"},
		{[]string{"generate", "dockerfile"}, "accepts 1 arg(s), received 0", "opm generate dockerfile <fbcRootDir> [flags]"},
	} {
		code, out, errs := run(t, tc.args...)
		if code != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, out)
		}
		if !strings.HasPrefix(errs, "Error: "+tc.err+"\nUsage:\n") || !strings.Contains(errs, tc.usage) || strings.Contains(errs, "level=fatal") {
			t.Errorf("%v: stderr:\n%s", tc.args, errs)
		}
	}
	if code, out, _ := run(t, "version", "extra"); code != 0 || !strings.HasPrefix(out, "Version: ") {
		t.Errorf("version ignores arguments as upstream does: exit %d, %q", code, out)
	}
}
