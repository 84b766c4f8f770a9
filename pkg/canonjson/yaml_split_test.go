package canonjson

import (
	"fmt"
	"strings"
	"testing"
)

// SplitYAML follows apimachinery's YAMLReader: a separator that meets an
// empty buffer starts a document, so two separators in a row (or a
// separator at the end after another) make an empty document.
func TestSplitYAML(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a: 1\n", "1:a: 1\n"},
		{"---\na: 1\n", "2:a: 1\n"},
		{"a: 1\n---\n", "1:a: 1\n"},
		{"a: 1\n---\nb: 2\n", "1:a: 1\n|3:b: 2\n"},
		{"a: 1\n---\n---\nb: 2", "1:a: 1\n|4:b: 2"},
		{"a: 1\n---\n---\n", "1:a: 1\n|3:"},
		{"---\n---\na: 1\n", "1:|3:a: 1\n"},
		{"---", "1:"},
		{"# c\n---\na: 1", "1:# c\n|3:a: 1"},
		{"a: 1\n--- # comment\nb: 2\n", "1:a: 1\n|3:b: 2\n"},
		{"a: 1\n---x\n", "error: line 2: invalid YAML document separator: \"---x\""},
	} {
		var docs []string
		err := SplitYAML([]byte(tc.src), func(d YAMLDoc) error {
			if tc.src[d.Offset:d.Offset+len(d.Data)] != string(d.Data) {
				t.Errorf("%q: offset %d does not point at the data", tc.src, d.Offset)
			}
			docs = append(docs, fmt.Sprintf("%d:%s", d.Line, d.Data))
			return nil
		})
		if err != nil {
			docs = append(docs, "error: "+err.Error())
		}
		if got := strings.Join(docs, "|"); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.src, got, tc.want)
		}
	}
}
