package declcfg

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// walkWith walks fsys, letting parsed claim files, and returns the blob
// lines in load order (blobs of claimed files come from claimed), the
// problems and the warnings.
func walkWith(t testing.TB, fsys fs.FS, claimed map[int][]string, parsed func(f File, i int) (Errors, Errors, bool), opts ...WalkOption) (lines, problems, warnings []string) {
	t.Helper()
	type item struct {
		file, index int
		line        string
	}
	var (
		mu    sync.Mutex
		items []item
	)
	opts = append(opts, WithConcurrency(3), WithWarnings(func(w *Error) { warnings = append(warnings, w.Error()) }))
	if parsed != nil {
		opts = append(opts, WithParsed(func(f File, i int) (Errors, Errors, bool) {
			p, w, ok := parsed(f, i)
			if ok {
				for j, l := range claimed[i] {
					items = append(items, item{i, j, l})
				}
			}
			return p, w, ok
		}))
	}
	err := Walk(context.Background(), fsys, func(b *Blob) error {
		mu.Lock()
		items = append(items, item{b.File, b.Index, blobLine(b)})
		mu.Unlock()
		return nil
	}, opts...)
	if err != nil {
		es, ok := err.(Errors)
		if !ok {
			t.Fatalf("Walk: %v", err)
		}
		for _, e := range es {
			problems = append(problems, e.Error())
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].file != items[j].file {
			return items[i].file < items[j].file
		}
		return items[i].index < items[j].index
	})
	for _, it := range items {
		lines = append(lines, it.line)
	}
	return lines, problems, warnings
}

func blobLine(b *Blob) string {
	return fmt.Sprintf("%s %s/%s/%s %d %v %s", b.Pos(), b.Schema, b.Package, b.Name, b.Offset, b.Verbatim, b.JSON)
}

// parseLines parses one file with ParseFile and returns its blob lines.
func parseLines(name string, data []byte, opts ...WalkOption) (lines []string, problems, warnings Errors) {
	problems, warnings, err := ParseFile(name, slices.Clone(data), 0, func(b *Blob) error {
		lines = append(lines, blobLine(b))
		return nil
	}, opts...)
	if err != nil {
		panic(err)
	}
	return lines, problems, warnings
}

// Files parsed ahead with ParseFile and handed to Walk through WithParsed
// give what Walk gives when it reads them itself: the same blobs, the
// same problems and warnings, in the same order.
func TestWalkWithParsed(t *testing.T) {
	big := `{"schema":"olm.package","name":"big","description":"` + strings.Repeat("x", 200) + `"}`
	fsys := fstest.MapFS{
		"a.json":         {Data: []byte("{\"schema\":\"olm.package\",\"name\":\"a\"}\n\n  {\n\"name\": \"x\", \"schema\": \"s\", \"package\": \"a\"}\n")},
		"b/c.yaml":       {Data: []byte("---\nschema: olm.package\nname: b\n---\n# comment\nSchema: other\nPACKAGE: b\n")},
		"b/d.json":       {Data: []byte("{\"schema\":\"a\"}\n{\"schema\" \"b\"}")},
		"bom.json":       {Data: []byte("\xef\xbb\xbf{\"schema\":\"a\"}\n{\"schema\":\"b\"}")},
		"big.json":       {Data: []byte(big)},
		"empty.yaml":     {Data: []byte("  \n")},
		"e/f.json":       {Data: []byte(`{"name":"a"}`)},
		"e/g.yaml":       {Data: []byte("- a\n")},
		".indexignore":   {Data: []byte("ignored.txt\n")},
		"ignored.txt":    {Data: []byte("not a catalog")},
		"z/last.json":    {Data: []byte(`{"schema":"olm.package","name":"z"}`)},
		"z/problem.json": {Data: []byte(`{"schema":"olm.package","name":"z"`)},
	}
	limit := WithMaxFileSize(100)
	wantLines, wantProblems, wantWarnings := walkWith(t, fsys, nil, nil, limit)
	if len(wantProblems) < 5 || len(wantWarnings) != 1 || len(wantLines) < 6 {
		t.Fatalf("the fixture gives %d blobs, problems %q, warnings %q", len(wantLines), wantProblems, wantWarnings)
	}
	for _, claim := range []func(i int) bool{
		func(int) bool { return true },
		func(i int) bool { return i%2 == 0 },
		func(i int) bool { return i%2 == 1 },
	} {
		claimed := map[int][]string{}
		lines, problems, warnings := walkWith(t, fsys, claimed, func(f File, i int) (Errors, Errors, bool) {
			if !claim(i) {
				return nil, nil, false
			}
			lines, problems, warnings := parseLines(f.Path, fsys[f.Path].Data, limit, WithWarnings(func(*Error) {}))
			// ParseFile numbered the file 0: the walk's index is i.
			claimed[i] = lines
			return problems, warnings, true
		}, limit)
		if !slices.Equal(lines, wantLines) {
			t.Errorf("blobs\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
		}
		if !slices.Equal(problems, wantProblems) {
			t.Errorf("problems\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(wantProblems, "\n"))
		}
		if !slices.Equal(warnings, wantWarnings) {
			t.Errorf("warnings %q, want %q", warnings, wantWarnings)
		}
	}

	// Over the size limit, and without WithWarnings, no warnings.
	if _, problems, _ := parseLines("big.json", []byte(big), limit); len(problems) != 1 || !strings.Contains(problems[0].Error(), "over the limit of 100 bytes") {
		t.Errorf("ParseFile of a file over the limit: %v", problems)
	}
	if _, _, warnings := parseLines("bom.json", fsys["bom.json"].Data); len(warnings) != 0 {
		t.Errorf("ParseFile without WithWarnings: warnings %v", warnings)
	}
}
