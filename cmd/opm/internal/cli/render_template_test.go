package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/internal/tmplfixture"
)

// templateRegistry serves the bundle images of testdata/bundles, once for
// all template tests of the package.
var templateRegistry = sync.OnceValues(func() (*tmplfixture.Server, error) {
	srv, err := tmplfixture.Start()
	if err != nil {
		return nil, err
	}
	testdata, _ := filepath.Abs(goldenRoot)
	if _, err := tmplfixture.PushBundles(srv.Host, filepath.Join(testdata, "bundles")); err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
})

// TestRenderTemplateGolden runs every case of tmplfixture.Cases (render-
// template with each fixture, type given and detected, file and standard
// input, JSON and YAML, migrations, command line errors; convert-template
// on every catalog file) and compares stdout byte for byte (as SHA-256),
// the exit code and the error line with upstream opm's, recorded by
// hack/templategolden in testdata/template-golden/results.json.
func TestRenderTemplateGolden(t *testing.T) {
	testutil.IsolateCredentials(t)
	srv, err := templateRegistry()
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	goldenDir := filepath.Join(testdata, "template-golden")
	data, err := os.ReadFile(filepath.Join(goldenDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []tmplfixture.Result
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	byName := map[string]tmplfixture.Result{}
	for _, r := range want {
		byName[r.Name] = r
	}
	cases, err := tmplfixture.Cases(testdata)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != len(want) {
		t.Fatalf("%d cases, %d recorded results: re-record with hack/templategolden", len(cases), len(want))
	}
	tmplDir := filepath.Join(t.TempDir(), "templates")
	if err := tmplfixture.ExpandTemplates(testdata, tmplDir, srv.Host); err != nil {
		t.Fatal(err)
	}
	// The race suite runs a sample that still has every fixture, every
	// way of calling and every catalog; the corpus build all of them.
	for _, c := range testutil.Cover(cases, templateCaseFeatures) {
		t.Run(c.Name, func(t *testing.T) {
			w, ok := byName[c.Name]
			if !ok {
				t.Fatalf("no recorded result")
			}
			in := []byte{}
			if c.Stdin != "" {
				if in, err = os.ReadFile(filepath.Join(tmplDir, c.Stdin)); err != nil {
					t.Fatal(err)
				}
			}
			var out, errb bytes.Buffer
			code := Main(context.Background(), Streams{In: bytes.NewReader(in), Out: &out, Err: &errb}, c.ResolveArgs(tmplDir, testdata))
			got := tmplfixture.Normalize(out.Bytes(), srv.Host)
			sum := sha256.Sum256(got)
			stderr := tmplfixture.NormalizeStderr(errb.Bytes(), srv.Host, tmplDir, testdata)
			if code != w.Exit {
				t.Errorf("exit %d, upstream %d (stderr %q)", code, w.Exit, stderr)
			}
			if hex.EncodeToString(sum[:]) != w.Stdout {
				msg := ""
				if full, err := os.ReadFile(filepath.Join(goldenDir, "out", c.Name)); err == nil {
					msg = "\n" + firstDifference(got, full)
				}
				t.Errorf("stdout (%d bytes) differs from upstream's (%d bytes)%s", len(got), w.Len, msg)
			}
			if c.ErrPrefix != "" {
				if !strings.HasPrefix(w.Stderr, c.ErrPrefix) {
					t.Fatalf("recorded error %q lacks the prefix %q", w.Stderr, c.ErrPrefix)
				}
				if !strings.HasPrefix(stderr, c.ErrPrefix) {
					t.Errorf("error %q, want the prefix %q", stderr, c.ErrPrefix)
				}
			} else if stderr != w.Stderr {
				t.Errorf("error line\n got  %q\n want %q", stderr, w.Stderr)
			}
		})
	}
}

// templateCaseFeatures is what a case of tmplfixture.Cases exercises,
// for the race suite's sample (testutil.Cover): a render-template case
// its fixture and its way of calling the command ("<type>-<fixture
// file>.<way>.<format>"; each way on a valid and on an invalid fixture),
// a convert-template case (basic or substitutes) on a catalog file its
// catalog and output format; every other case (errors, flags) is one of a kind.
func templateCaseFeatures(c tmplfixture.Case) []string {
	name := c.Name
	if kind, ok := strings.CutSuffix(strings.SplitN(name, "catalog", 2)[0], "-"); ok && strings.HasPrefix(name, "convert-") {
		src := strings.Split(c.Args[len(c.Args)-1], "/") // {testdata}/<root>/<catalog>/...
		if len(src) > 3 {
			return []string{kind + " " + src[1] + "/" + src[2], kind + " " + filepath.Ext(name)}
		}
	}
	if kind, _, _ := strings.Cut(name, "-"); kind == "basic" || kind == "semver" || kind == "detect" {
		parts := strings.Split(name, ".")
		if len(parts) > 3 {
			fixture, way := strings.Join(parts[:len(parts)-2], "."), kind+" "+strings.Join(parts[len(parts)-2:], ".")
			if strings.Contains(fixture, "-err-") {
				way += " (error)"
			}
			return []string{fixture, way}
		}
	}
	return []string{name}
}

// TestRenderTemplateProgress: on a terminal the bundle images pulled are
// counted on a status line and summed up on stderr; the output is the same
// as without a terminal, where nothing is added to stderr.
func TestRenderTemplateProgress(t *testing.T) {
	testutil.IsolateCredentials(t)
	srv, err := templateRegistry()
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	tmplDir := filepath.Join(t.TempDir(), "templates")
	if err := tmplfixture.ExpandTemplates(testdata, tmplDir, srv.Host); err != nil {
		t.Fatal(err)
	}
	cases, err := tmplfixture.Cases(testdata)
	if err != nil {
		t.Fatal(err)
	}
	pulled := 0
	for _, c := range cases {
		if c.Stdin != "" || len(c.Args) < 2 || c.Args[1] != "render-template" {
			continue
		}
		args := c.ResolveArgs(tmplDir, testdata)
		var out, errb, tout, terr bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args)
		if code != 0 {
			continue
		}
		if errb.Len() != 0 {
			t.Errorf("%s: stderr without a terminal: %q", c.Name, errb.String())
		}
		if code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &tout, Err: &terr, Terminal: true}, args); code != 0 || tout.String() != out.String() {
			t.Errorf("%s on a terminal: exit %d, same output: %v", c.Name, code, tout.String() == out.String())
		}
		if strings.Contains(terr.String(), "pulling images: ") && strings.Contains(terr.String(), " images in ") {
			pulled++
		}
		if pulled == 2 {
			return
		}
	}
	t.Fatalf("%d successful render-template cases summed up their pulls, want 2", pulled)
}

// firstDifference shows where got and want first differ.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-200)
	return "first difference at byte " + strconv.Itoa(i) + ":\n got  ..." + string(got[lo:min(len(got), i+100)]) + "\n want ..." + string(want[lo:min(len(want), i+100)])
}

// TestRenderTemplateHelp compares the help of render-template and
// convert-template (the command, basic and substitutes) with upstream's
// (recorded with `opm alpha render-template --help`,
// `opm alpha convert-template --help`, `opm alpha convert-template basic
// --help` and `... substitutes --help`), byte for byte once the two flags
// that upstream lacks (--image-cache-dir, ours; the global
// --max-catalog-file-size) are hidden.
func TestRenderTemplateHelp(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"help-render-template.txt", []string{"alpha", "render-template", "--help"}},
		{"help-convert-template-basic.txt", []string{"alpha", "convert-template", "basic", "--help"}},
		{"help-convert-template-substitutes.txt", []string{"alpha", "convert-template", "substitutes", "--help"}},
		{"help-convert-template.txt", []string{"alpha", "convert-template", "--help"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(goldenRoot, "template-golden", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			root := New(Streams{In: strings.NewReader(""), Out: &out, Err: &out})
			if err := root.PersistentFlags().MarkHidden("max-catalog-file-size"); err != nil {
				t.Fatal(err)
			}
			cmd, _, err := root.Find(tc.args[:len(tc.args)-1])
			if err != nil {
				t.Fatal(err)
			}
			if f := cmd.Flags().Lookup("image-cache-dir"); f != nil {
				f.Hidden = true
			}
			root.SetArgs(tc.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("help differs from upstream's:\n%s", firstDifference(out.Bytes(), want))
			}
		})
	}
}

// BenchmarkRenderTemplateSemver30 renders a 30-bundle semver template
// whose registry answers every request after 20 ms (docs/performance.md
// compares it with upstream's binary, measured by hack/templatebench).
func BenchmarkRenderTemplateSemver30(b *testing.B) {
	testutil.IsolateCredentials(b)
	srv, err := tmplfixture.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tmpl, err := tmplfixture.PushSynthetic(srv.Host, filepath.Join(goldenRoot, "bundles"))
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "semver.yaml")
	if err := os.WriteFile(file, tmpl, 0o644); err != nil {
		b.Fatal(err)
	}
	srv.SetDelay(20 * time.Millisecond)
	args := []string{"alpha", "render-template", "semver", file, "--use-http"}
	for b.Loop() {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		if !bytes.Contains(out.Bytes(), []byte(`"name": "stable-v1.9"`)) {
			b.Fatal("the output lacks the channel stable-v1.9")
		}
	}
}
