package declcfg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/text/cases"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// The loader must read every file as upstream opm reads it: through
// apimachinery's YAMLOrJSONDecoder (with opm's 4096-byte sniffing buffer),
// each value decoded into a map and encoded again by encoding/json
// (declcfg.Meta.UnmarshalJSON). The tests below run that very decoder, a
// test-only dependency, next to ours.

// upstreamMeta is upstream's declcfg.Meta as far as the loader goes.
type upstreamMeta struct {
	schema string
	blob   []byte
}

func (m *upstreamMeta) UnmarshalJSON(data []byte) error {
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	fold := cases.Fold()
	seen := map[string]bool{}
	for k, val := range v {
		f := fold.String(k)
		if seen[f] {
			return fmt.Errorf("duplicate keys for %q", f)
		}
		seen[f] = true
		switch f {
		case "schema", "package", "name":
			// extractUniqueMetaKeys: these must be strings.
			str, ok := val.(string)
			if !ok {
				return fmt.Errorf("expected value for key %q to be a string", k)
			}
			if f == "schema" {
				m.schema = str
			}
		}
	}
	var err error
	m.blob, err = testutil.CanonicalJSON(v)
	return err
}

// upstreamDecode returns the blobs upstream's loader reads from a file, in
// order, and the error it stops at (a value that does not decode, is not
// an object, or has no schema).
func upstreamDecode(data []byte) ([][]byte, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var blobs [][]byte
	for {
		var m upstreamMeta
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return blobs, nil
			}
			return blobs, err
		}
		if m.schema == "" {
			return blobs, errors.New("no schema")
		}
		blobs = append(blobs, m.blob)
	}
}

// ourDecode returns the blobs our loader reads from a file, in order, and
// its problems.
func ourDecode(data []byte) ([][]byte, error) {
	var blobs [][]byte
	err := Walk(context.Background(), fstest.MapFS{"f": {Data: data}}, func(b *Blob) error {
		blobs = append(blobs, bytes.Clone(b.JSON))
		return nil
	}, WithConcurrency(1))
	return blobs, err
}

// compareWithUpstream fails when our loader reads data differently from
// upstream's: where upstream reads the whole file, we must read the same
// blobs without a problem; where upstream stops at an error, we must
// report a problem too, and agree on the blobs before it.
//
// Two deliberate differences: a last line of 4096·k bytes without a line
// break, which upstream drops (TestUpstreamDropsA4096ByteLastLine); and a byte order mark before a JSON stream makes
// upstream read the file as YAML, and only its first object; we read the
// whole stream, as upstream reads it without the mark.
func compareWithUpstream(t *testing.T, name string, data []byte) {
	t.Helper()
	up := data
	if rest := bytes.TrimPrefix(data, utf8BOM); len(rest) < len(data) && canonjson.IsJSONStream(rest) {
		up = rest
	}
	if lastLine := up[bytes.LastIndexByte(up, '\n')+1:]; len(lastLine) > 0 && len(lastLine)%4096 == 0 && !canonjson.IsJSONStream(up) {
		return // upstream drops that line (TestUpstreamDropsA4096ByteLastLine)
	}
	want, upErr := upstreamDecode(up)
	got, err := ourDecode(data)
	if upErr == nil && err != nil {
		t.Fatalf("%s: upstream reads the file, we report: %v\n%.400q", name, err, data)
	}
	if upErr != nil && err == nil {
		t.Fatalf("%s: upstream stops at %v, we report nothing\n%.400q", name, upErr, data)
	}
	n := len(want)
	if upErr != nil {
		n = min(n, len(got))
	} else if len(got) != len(want) {
		t.Fatalf("%s: %d blobs, upstream %d\n%.400q", name, len(got), len(want), data)
	}
	for i := 0; i < n; i++ {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: blob %d differs from upstream's\nours     %.300s\nupstream %.300s", name, i, got[i], want[i])
		}
	}
}

// TestUpstreamDecoderOnRealCatalogs reads every file of the repository's
// real catalogs (17 MB, in the corpus build) as they are, without their
// final line break, and with CRLF line ends.
func TestUpstreamDecoderOnRealCatalogs(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "catalogs")
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".indexignore" {
			return err
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("only %d files found", len(files))
	}
	// The race suite reads one file of each catalog and of each format.
	sample := testutil.Cover(files, func(path string) []string {
		rel, _ := filepath.Rel(root, path)
		catalog, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		return []string{catalog, filepath.Ext(path)}
	})
	for _, path := range sample {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		compareWithUpstream(t, path, data)
		compareWithUpstream(t, path+" without final line break", bytes.TrimRight(data, "\n"))
		compareWithUpstream(t, path+" with CRLF", bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
	}
}

// TestUpstreamDecoderBlockScalarAtEnd: a block scalar that ends a file, or
// its last document, keeps upstream's line break whatever the file's end.
func TestUpstreamDecoderBlockScalarAtEnd(t *testing.T) {
	head := "schema: olm.deprecations\npackage: p\nentries:\n- reference:\n    schema: olm.package\n  message: "
	for _, indicator := range []string{"|", "|+", "|-", ">", ">+", ">-", "|2", ">+2"} {
		for _, end := range []string{"", "\n", "\n\n", "\r\n", "\n  \n", "\n# c"} {
			for _, before := range []string{"", "schema: x\n---\n", "{\"schema\":\"x\"}\n"} {
				data := before + head + indicator + "\n    deprecated\n    since 1.2" + end
				name := fmt.Sprintf("%q", data)
				compareWithUpstream(t, name, []byte(data))
				if _, err := upstreamDecode([]byte(data)); err != nil {
					t.Fatalf("%s: upstream cannot read the case: %v", name, err)
				}
			}
		}
	}
	// The message as it ends up: one line break, as upstream keeps it.
	blobs, err := ourDecode([]byte(head + "|\n    deprecated"))
	if err != nil || len(blobs) != 1 || !strings.Contains(string(blobs[0]), `"message":"deprecated\n"`) {
		t.Errorf("block scalar at the end of a file: %s, %v", blobs, err)
	}
}

// TestByteOrderMark: a JSON stream after a byte order mark is read whole,
// at the right positions; YAML after one is read as upstream reads it.
func TestByteOrderMark(t *testing.T) {
	stream := "\xef\xbb\xbf" + `{"schema":"a"}` + "\n" + `{"schema":"b"}` + "\n" + `{"schema":"c"}`
	blobs, err := ourDecode([]byte(stream))
	if err != nil || len(blobs) != 3 {
		t.Fatalf("%d blobs, %v; want all 3", len(blobs), err)
	}
	lines, err := collectBlobs(t, fstest.MapFS{"f.json": {Data: []byte(stream)}})
	if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[0], "f.json:1:4 ") || !strings.HasPrefix(lines[2], "f.json:3:1 ") {
		t.Errorf("positions %q, %v", lines, err)
	}
	compareWithUpstream(t, "bom yaml", []byte("\xef\xbb\xbfschema: a\n---\nschema: b\n"))
	if up, err := upstreamDecode([]byte(stream)); err != nil || len(up) != 1 {
		t.Errorf("upstream now reads %d blobs (%v): update docs/compatibility.md", len(up), err)
	}
}

// TestUpstreamDropsA4096ByteLastLine: upstream's line reader drops the last
// line of a YAML file when it has no line break and its length is a
// multiple of 4096 bytes. So it reads a file of 4096·k NUL bytes as empty
// (and refuses other sizes: control characters); a file of NUL bytes is
// refused here whatever its size (docs/compatibility.md), and a last line
// is never dropped.
func TestUpstreamDropsA4096ByteLastLine(t *testing.T) {
	for _, n := range []int{4096, 8192} {
		if blobs, err := upstreamDecode(make([]byte, n)); err != nil || len(blobs) != 0 {
			t.Errorf("%d NUL bytes: upstream now reads %d blobs, %v: update docs/compatibility.md", n, len(blobs), err)
		}
		if _, err := ourDecode(make([]byte, n)); err == nil || !strings.Contains(err.Error(), "only NUL bytes") {
			t.Errorf("%d NUL bytes: %v", n, err)
		}
	}
	if _, err := upstreamDecode(make([]byte, 100)); err == nil {
		t.Error("upstream now reads 100 NUL bytes: update docs/compatibility.md")
	}
	last := "description: " + strings.Repeat("a", 4096-len("description: "))
	data := []byte("schema: x\n" + last)
	up, err := upstreamDecode(data)
	if err != nil || len(up) != 1 || strings.Contains(string(up[0]), "description") {
		t.Errorf("upstream now keeps the last line (%q, %v): update docs/compatibility.md", up, err)
	}
	ours, err := ourDecode(data)
	if err != nil || len(ours) != 1 || !strings.Contains(string(ours[0]), `"description":"aaa`) {
		t.Errorf("ours: %q, %v", ours, err)
	}
}
