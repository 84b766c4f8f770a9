package declcfg

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// locateAll walks fsys and returns, for each blob with a name, the
// position Locate gives for each path, as "name path=line:col".
func locateAll(t *testing.T, fsys fstest.MapFS, paths map[string][]PathStep) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		out []string
	)
	err := Walk(context.Background(), fsys, func(b *Blob) error {
		for name, p := range paths {
			line, col := b.Locate(p)
			mu.Lock()
			out = append(out, fmt.Sprintf("%s %s %s=%d:%d", b.Path, b.Name, name, line, col))
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLocate(t *testing.T) {
	key := func(k string) PathStep { return PathStep{Key: k} }
	idx := func(i int) PathStep { return PathStep{Index: i, IsIndex: true} }
	paths := map[string][]PathStep{
		"icon.base64data":        {key("icon"), key("base64data")},
		"relatedImages[1].image": {key("relatedImages"), idx(1), key("image")},
		"relatedImages[1].x":     {key("relatedImages"), idx(1), key("x")}, // missing: the element
		"schema":                 {key("schema")},
		"none":                   {key("nowhere"), key("x")}, // missing: the blob
	}
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte("schema: olm.package\nname: a\n---\n# c\nSchema: olm.bundle\nname: b\nrelatedImages:\n- image: x\n- name: y\n  image: \"z\"\nicon:\n  base64data:\n  mediatype: m\n")},
		"b.json": {Data: []byte("{\"schema\":\"olm.package\",\"name\":\"c\"}\n  {\n    \"name\": \"d\",\n    \"icon\": {\"mediatype\": \"m\", \"base64data\": null},\n    \"relatedImages\": [{\"image\": \"x\"}, {\"image\": \"é\\\"y\"}],\n    \"schema\": \"olm.bundle\"\n  }\n")},
		"c.json": {Data: []byte(`{"schema":"x","name":"e","relatedImages":[{"image":"]}"},{"image":"q"}],"icon":{"base64data":"x"}}`)},
	}
	got := strings.Join(sortedLines(locateAll(t, fsys, paths)), "\n")
	want := strings.Join(sortedLines([]string{
		"a.yaml a icon.base64data=1:1", "a.yaml a relatedImages[1].image=1:1", "a.yaml a relatedImages[1].x=1:1", "a.yaml a schema=1:1", "a.yaml a none=1:1",
		"a.yaml b icon.base64data=12:3", "a.yaml b relatedImages[1].image=10:3", "a.yaml b relatedImages[1].x=9:3", "a.yaml b schema=5:1", "a.yaml b none=4:1",
		"b.json c icon.base64data=1:1", "b.json c relatedImages[1].image=1:1", "b.json c relatedImages[1].x=1:1", "b.json c schema=1:2", "b.json c none=1:1",
		"b.json d icon.base64data=4:32", "b.json d relatedImages[1].image=5:40", "b.json d relatedImages[1].x=5:39", "b.json d schema=6:5", "b.json d none=2:3",
		"c.json e icon.base64data=1:81", "c.json e relatedImages[1].image=1:59", "c.json e relatedImages[1].x=1:58", "c.json e schema=1:2", "c.json e none=1:1",
	}), "\n")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func sortedLines(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// A JSON stream after a byte order mark is read whole, with a warning
// that other tools read its first object only; one object, or YAML, is
// read the same by every tool and gets none.
func TestWarnings(t *testing.T) {
	fsys := fstest.MapFS{
		"bom.json":   {Data: []byte("\xef\xbb\xbf{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n{\"schema\":\"c\"}\n")},
		"bom1.json":  {Data: []byte("\xef\xbb\xbf{\"schema\":\"a\"}\n")},
		"bom.yaml":   {Data: []byte("\xef\xbb\xbfschema: a\n---\nschema: b\n")},
		"plain.json": {Data: []byte("{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n")},
	}
	var got []string
	err := Walk(context.Background(), fsys, func(*Blob) error { return nil }, WithWarnings(func(w *Error) { got = append(got, w.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	want := "bom.json:1: the file starts with a UTF-8 byte order mark and holds a JSON stream of 3 objects: opm reads them all, but upstream opm and catalogd read only the first; remove the byte order mark"
	if strings.Join(got, "\n") != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// Locate parses only the top-level field the path starts in when it can,
// and the whole document when that part does not parse on its own.
func TestLocateTopLevelField(t *testing.T) {
	key := func(k string) PathStep { return PathStep{Key: k} }
	idx := func(i int) PathStep { return PathStep{Index: i, IsIndex: true} }
	paths := map[string][]PathStep{
		"relatedImages[0].image": {key("relatedImages"), idx(0), key("image")},
		"entries[1].name":        {key("entries"), idx(1), key("name")},
	}
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte("schema: olm.bundle\nname: a\nproperties:\n- type: x\n  value: |\n    relatedImages:\n    - image: no\n# c\nrelatedImages:\n- name: n\n  image: \"\"\nentries: [{name: x},\n  {name: y}]\n")},
		"b.yaml": {Data: []byte("schema: olm.channel\nname: b\nentries: [{name: x},\n{name: y}]\n")},
	}
	got := strings.Join(sortedLines(locateAll(t, fsys, paths)), "\n")
	want := strings.Join(sortedLines([]string{
		"a.yaml a relatedImages[0].image=11:3", "a.yaml a entries[1].name=13:4",
		"b.yaml b relatedImages[0].image=1:1", "b.yaml b entries[1].name=4:2",
	}), "\n")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
