package fastopm_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks every relative link of README.md and docs/*.md: the
// file it names exists, and so does the heading its #anchor names (as
// GitHub makes anchors of headings).
func TestDocLinks(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		b, err := os.ReadFile(file)
		if err == nil {
			inCode := false
			for line := range strings.Lines(string(b)) {
				if strings.HasPrefix(line, "```") {
					inCode = !inCode
				}
				if !inCode && strings.HasPrefix(line, "#") {
					a[slug(strings.TrimLeft(strings.TrimSpace(line), "# "))] = true
				}
			}
		}
		anchors[file] = a
		return a
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %s: %v", f, target, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !anchorsOf(file)[anchor] {
				t.Errorf("%s: link %s: %s has no heading with that anchor", f, target, file)
			}
		}
	}
}

// slug is GitHub's anchor of a heading: lower case, spaces to hyphens,
// punctuation but hyphens and underscores dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
