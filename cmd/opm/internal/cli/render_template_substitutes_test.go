package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/testutil"
)

// TestRenderTemplateSubstitutes renders the substitutes fixtures that
// upstream renders (testdata/templates/substitutes, goldens recorded by
// hack/substitutesgolden) through the command, by type and by detection,
// and compares the bytes with upstream's.
func TestRenderTemplateSubstitutes(t *testing.T) {
	testutil.IsolateCredentials(t)
	fixtures := filepath.Join(goldenRoot, "templates", "substitutes")
	goldens := filepath.Join(goldenRoot, "golden", "templates", "substitutes")
	host := imagetest.Registry(t)
	f, err := os.Open(filepath.Join(fixtures, "IMAGES"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if fields := strings.Fields(line); len(fields) == 2 {
			imagetest.Push(t, host+"/"+fields[1], imagetest.BundleImage(t, filepath.Join(goldenRoot, "..", fields[0])))
		}
	}
	f.Close()
	names, _ := filepath.Glob(filepath.Join(fixtures, "*.*"))
	rendered := 0
	for _, fixture := range names {
		ext := filepath.Ext(fixture)
		if ext != ".yaml" && ext != ".json" {
			continue
		}
		stem := strings.TrimSuffix(filepath.Base(fixture), ext)
		want, err := os.ReadFile(filepath.Join(goldens, stem+".yaml"))
		if err != nil {
			continue // an error case: checked by alpha/template/substitutes
		}
		data, err := os.ReadFile(fixture)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := filepath.Join(t.TempDir(), "template"+ext)
		if err := os.WriteFile(tmpl, bytes.ReplaceAll(data, []byte("REGISTRY_HOST"), []byte(host)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"--use-http", "alpha", "render-template", "substitutes", tmpl, "-o", "yaml"},
			{"--use-http", "alpha", "render-template", tmpl, "-o", "yaml"},
		} {
			code, out, errOut := run(t, args...)
			got := strings.ReplaceAll(out, host, "REGISTRY_HOST")
			if code != 0 || got != string(want) {
				t.Errorf("%s %v: exit %d, %s\n%.300s", stem, args[3], code, errOut, got)
			}
		}
		rendered++
	}
	if rendered < 5 {
		t.Fatalf("only %d fixtures rendered", rendered)
	}
}

// TestRenderTemplateMermaid: -o mermaid draws the rendered catalog as
// upstream does (testdata/template-golden/README.md).
func TestRenderTemplateMermaid(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(goldenRoot, "template-golden", "mermaid-etcd.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "alpha", "render-template", "basic", filepath.Join(goldenRoot, "template-golden", "mermaid-etcd.json"), "-o", "mermaid")
	if code != 0 || out != string(want) {
		t.Errorf("exit %d, %s\n%s\nwant\n%s", code, errOut, out, want)
	}
}
