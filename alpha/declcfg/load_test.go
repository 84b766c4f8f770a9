package declcfg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// collectBlobs walks fsys and returns "path:line:col schema/package/name
// canonical-json" lines in load order, and the walk's error.
func collectBlobs(t testing.TB, fsys fs.FS) ([]string, error) {
	type item struct {
		file, index int
		line        string
	}
	var (
		mu    sync.Mutex
		items []item
	)
	err := Walk(context.Background(), fsys, func(b *Blob) error {
		if b.Verbatim {
			// A verbatim blob is exactly the file's bytes at Offset.
			data, err := fs.ReadFile(fsys, b.Path)
			if err != nil {
				return err
			}
			if !bytes.Equal(data[b.Offset:b.Offset+len(b.JSON)], b.JSON) {
				return fmt.Errorf("%s: verbatim blob does not match the file at offset %d", b.Pos(), b.Offset)
			}
		}
		line := fmt.Sprintf("%s %s/%s/%s %s", b.Pos(), b.Schema, b.Package, b.Name, b.JSON)
		mu.Lock()
		items = append(items, item{b.File, b.Index, line})
		mu.Unlock()
		return nil
	}, WithConcurrency(3))
	sort.Slice(items, func(i, j int) bool {
		if items[i].file != items[j].file {
			return items[i].file < items[j].file
		}
		return items[i].index < items[j].index
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.line
	}
	return out, err
}

func TestWalk(t *testing.T) {
	fsys := fstest.MapFS{
		"a.json":       {Data: []byte("{\"schema\":\"olm.package\",\"name\":\"a\"}\n\n  {\n\"name\": \"x\", \"schema\": \"s\", \"package\": \"a\"}\n")},
		"b/c.yaml":     {Data: []byte("---\nschema: olm.package\nname: b\n---\n# comment\nSchema: other\nPACKAGE: b\nlist: [1, 2.0, yes, \"x<y>&z\"]\n")},
		"b/crlf.yaml":  {Data: []byte("schema: crlf\r\nname: c\r\n")},
		".indexignore": {Data: []byte("ignored.txt\n")},
		"ignored.txt":  {Data: []byte("not a catalog")},
	}
	got, err := collectBlobs(t, fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`a.json:1:1 olm.package//a {"name":"a","schema":"olm.package"}`,
		`a.json:3:3 s/a/x {"name":"x","package":"a","schema":"s"}`,
		`b/c.yaml:2:1 olm.package//b {"name":"b","schema":"olm.package"}`,
		`b/c.yaml:5:1 other/b/ {"PACKAGE":"b","Schema":"other","list":[1,2,true,"x<y>&z"]}`,
		`b/crlf.yaml:1:1 crlf//c {"name":"c","schema":"crlf"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWalkErrors(t *testing.T) {
	cases := []struct {
		name string
		fsys fstest.MapFS
		want []string // each error's text, in order
	}{
		{"json syntax", fstest.MapFS{"x.json": {Data: []byte("{\"schema\":\"a\"}\n{\"schema\" \"b\"}")}},
			[]string{`x.json:2:11: invalid JSON: invalid character '"' after object key`}},
		{"yaml syntax", fstest.MapFS{"x.yaml": {Data: []byte("schema: a\n---\nschema: b\n  name: c\n")}},
			// The file holds a catalog blob: no .indexignore advice.
			[]string{"x.yaml:4: invalid YAML: mapping values are not allowed in this context"}},
		{"yaml syntax in a file of no blob", fstest.MapFS{"x.yaml": {Data: []byte("# Read me\nThis is: a catalog\n  nope: x\n")}},
			[]string{"x.yaml:3: invalid YAML: mapping values are not allowed in this context" + notCatalogHint}},
		// go-yaml numbers the lines of its parser's problems from 0: the
		// line is the one of the error all the same.
		{"yaml parser problem", fstest.MapFS{"x.yaml": {Data: []byte("schema: olm.channel\nentries:\n  - name: a\n - name: b\n")}},
			[]string{"x.yaml:4: invalid YAML: did not find expected key"}},
		{"yaml parser problem at the end", fstest.MapFS{"x.yaml": {Data: []byte("schema: x\n---\nschema: [")}},
			[]string{"x.yaml:3: invalid YAML: did not find expected node content"}},
		{"nul bytes", fstest.MapFS{"x.yaml": {Data: make([]byte, 8192)}},
			[]string{"x.yaml: not a catalog file: the file holds only NUL bytes (8192), as a file whose writing never completed does" + notCatalogHint}},
		{"not an object", fstest.MapFS{"x.yaml": {Data: []byte("- a\n- b\n")}},
			[]string{"x.yaml:1:1: not a catalog file: expected an object with a schema, found an array" + notCatalogHint}},
		{"missing schema", fstest.MapFS{"x.json": {Data: []byte(`{"name":"a"}`)}},
			[]string{`x.json:1:1: the object has no "schema" key (or it is empty): every catalog blob needs a schema`}},
		{"folded duplicate", fstest.MapFS{"x.json": {Data: []byte(`{"schema":"a","SCHEMA":"b","Name":"n","name":"m"}`)}},
			[]string{`x.json:1:1: duplicate keys for key "name": [Name name]; duplicate keys for key "schema": [SCHEMA schema]`}},
		{"meta not a string", fstest.MapFS{"x.json": {Data: []byte(`{"schema":"a","package":null}`)}},
			[]string{`x.json:1:1: the value of "package" must be a string, found null`}},
		{"empty file", fstest.MapFS{"x.yaml": {Data: []byte("  \n")}},
			[]string{"x.yaml: not a catalog file: the file is empty" + notCatalogHint}},
		{"bad separator", fstest.MapFS{"x.yaml": {Data: []byte("schema: a\n---x\n")}},
			[]string{`x.yaml:2: invalid YAML document separator: "---x"`}},
		{"every bad file", fstest.MapFS{
			"a.json": {Data: []byte("{")},
			"b.yaml": {Data: []byte("schema: [")},
			"c.yaml": {Data: []byte("schema: ok\n")},
		}, []string{"a.json:1:2: invalid JSON: unexpected end of JSON input", "b.yaml:1: invalid YAML: did not find expected node content"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := collectBlobs(t, tc.fsys)
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("err = %v, want Errors", err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestWalkStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	fsys := fstest.MapFS{}
	for i := 0; i < 50; i++ {
		fsys[fmt.Sprintf("f%02d.json", i)] = &fstest.MapFile{Data: []byte(`{"schema":"x"}`)}
	}
	err := Walk(context.Background(), fsys, func(*Blob) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	// Typed decoding follows encoding/json: fold-insensitive keys, the last
	// matching key wins, null leaves fields unset.
	blobs := []string{
		`{"defaultChannel":"s","description":"d","icon":{"base64data":"aGk=","mediatype":"image/png","type":"x"},"name":"p","properties":[{"type":"t","value":{"a":1}}],"schema":"olm.package"}`,
		`{"defaultChannel":"a","icon":{"MediaType":"a","mediatype":"b","base64data":null},"name":"x","schema":"olm.package","description":null}`,
		`{"entries":[{"name":"a","replaces":"b","skipRange":"<1.0.0","skips":["c","d"]},{"Name":"e","skips":null}],"name":"c","package":"p","schema":"olm.channel"}`,
		`{"name":"c","package":"p","schema":"olm.channel"}`,
		`{"image":"i","name":"b","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"x"},{"Type":"y","Value":null}],"relatedImages":[{"image":"r","name":"n"},{"image":"q"}],"schema":"olm.bundle","unknown":[1]}`,
		`{"entries":[{"message":"m","reference":{"name":"n","schema":"olm.bundle"}},{"reference":{"schema":"olm.package"}}],"package":"p","schema":"olm.deprecations"}`,
	}
	for _, blob := range blobs {
		m := Meta{JSON: []byte(blob)}
		if err := extractMeta(&m); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeBlob(&m)
		if err != nil {
			t.Fatalf("%s: %v", blob, err)
		}
		want := map[string]any{SchemaPackage: &Package{}, SchemaChannel: &Channel{}, SchemaBundle: &Bundle{}, SchemaDeprecations: &Deprecation{}}[m.Schema]
		if err := json.Unmarshal([]byte(blob), want); err != nil {
			t.Fatal(err)
		}
		// Compare through the writer, which is itself compared with
		// encoding/json in write_test.go.
		if g, w := AppendJSON(nil, got), AppendJSON(nil, want); !bytes.Equal(g, w) {
			t.Errorf("decode %s\n got %s\nwant %s", blob, g, w)
		}
	}
}

func TestDecodeTypeErrors(t *testing.T) {
	cases := map[string]string{
		`{"schema":"olm.bundle","image":5}`:                             `field "image" must be a string, found number`,
		`{"schema":"olm.bundle","properties":{}}`:                       `field "properties" must be a list, found object`,
		`{"schema":"olm.bundle","properties":[{"type":1}]}`:             `field "properties[0].type" must be a string, found number`,
		`{"schema":"olm.bundle","relatedImages":[{"image":true}]}`:      `field "relatedImages[0].image" must be a string, found bool`,
		`{"schema":"olm.channel","entries":[{"name":"a","skips":"b"}]}`: `field "entries[0].skips" must be a list of strings, found string`,
		`{"schema":"olm.package","icon":{"base64data":"!!"}}`:           `field "icon.base64data": illegal base64 data at input byte 0`,
		`{"schema":"olm.deprecations","entries":[{"reference":"x"}]}`:   `field "entries[0].reference" must be an object, found string`,
	}
	for blob, want := range cases {
		m := Meta{JSON: []byte(blob)}
		if err := extractMeta(&m); err != nil {
			t.Fatal(err)
		}
		_, err := DecodeBlob(&m)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", blob, err, want)
		}
		// encoding/json agrees that the blob does not decode.
		target := map[string]any{SchemaPackage: &Package{}, SchemaChannel: &Channel{}, SchemaBundle: &Bundle{}, SchemaDeprecations: &Deprecation{}}[m.Schema]
		if json.Unmarshal([]byte(blob), target) == nil {
			t.Errorf("%s: encoding/json accepts it", blob)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"schema":"olm.package","name":"a"}`), false)
	f.Add([]byte("schema: olm.bundle\nname: b\nproperties: [{type: olm.package, value: {packageName: a, version: 1.0.0}}]\n---\nschema: x\n"), true)
	f.Add([]byte("---\n- 1\n--- # c\n{a: b}\n"), true)
	f.Add([]byte("{\"schema\":\"a\"}\n{schema: b,}\n---\n---\n"), false)
	f.Add([]byte("{\"schema\":\"olm.channel\",\"entries\":[{\"name\":\"x\",\"skips\":[\"\\ud800\"]}]}"), false)
	f.Add([]byte("schema: x\nmessage: |+\n  a\n\n  b"), true)
	f.Add([]byte("\xef\xbb\xbf{\"schema\":\"a\"}\n{\"schema\":\"b\"}"), false)
	f.Add([]byte("schema: x\r\nmessage: >\r\n  a\r\n  b"), true)
	f.Fuzz(func(t *testing.T, data []byte, yaml bool) {
		name := "f.json"
		if yaml {
			name = "f.yaml"
		}
		fsys := fstest.MapFS{name: {Data: data}}
		err := Walk(context.Background(), fsys, func(b *Blob) error {
			if _, err := DecodeBlob(&b.Meta); err != nil {
				return nil
			}
			if !json.Valid(b.JSON) {
				t.Fatalf("blob is not JSON: %q", b.JSON)
			}
			return nil
		})
		var es Errors
		if err != nil && !errors.As(err, &es) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		for _, e := range es {
			if e.Path != name {
				t.Fatalf("error without the file name: %v", e)
			}
		}
		// ParseFile reads the bytes as Walk reads the file.
		wantLines, wantProblems, _ := walkWith(t, fsys, nil, nil)
		lines, problems, _ := parseLines(name, data)
		var got []string
		for _, e := range problems {
			got = append(got, e.Error())
		}
		if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") || strings.Join(got, "\n") != strings.Join(wantProblems, "\n") {
			t.Fatalf("ParseFile: blobs %q, problems %q; Walk: %q, %q", lines, got, wantLines, wantProblems)
		}
		// Read as upstream's decoder reads it, except for the one
		// documented difference: a zero-byte file is refused here
		// (upstream reads no blob from it).
		if len(data) > 0 {
			compareWithUpstream(t, name, data)
		}
	})
}

// Real catalogs have single lines of several megabytes (a CSV embedded in
// an olm.bundle.object, a base64 icon); no line-length limit may apply, in
// JSON or YAML, and positions after such a line stay right.
func TestWalkLongLines(t *testing.T) {
	long := strings.Repeat("QUJD", 3<<20/4) // 3 MiB of base64
	fsys := fstest.MapFS{
		"a.json": {Data: []byte(`{"schema":"olm.package","name":"a","icon":{"base64data":"` + long + `"}}` + "\n" + `{"schema":"x","name":"after"}` + "\n")},
		"b.yaml": {Data: []byte("schema: olm.package\nname: b\nicon:\n  base64data: " + long + "\n---\nschema: x\nname: after\n")},
	}
	got, err := collectBlobs(t, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d blobs, want 4", len(got))
	}
	for i, want := range []string{"a.json:1:1 olm.package//a ", "a.json:2:1 x//after ", "b.yaml:1:1 olm.package//b ", "b.yaml:6:1 x//after "} {
		if !strings.HasPrefix(got[i], want) {
			t.Errorf("blob %d: got %.80s, want prefix %q", i, got[i], want)
		}
	}
	for _, i := range []int{0, 2} {
		if !strings.Contains(got[i], `"base64data":"`+long+`"`) {
			t.Errorf("blob %d lost its long value", i)
		}
	}
}

// A file that starts with '{' but is not a JSON stream is read as YAML when
// at most one JSON value parsed before the error, as upstream's
// YAMLOrJSONDecoder does; the verdicts below were checked against opm v1.73.
func TestWalkJSONFallsBackToYAML(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // schemas of the blobs, in order
		err       string
	}{
		{"flow mapping", "{schema: a, package: p}", []string{"a"}, ""},
		{"single quotes", "{'schema': 'a'}", []string{"a"}, ""},
		{"trailing comma", `{"schema": "a",}`, []string{"a"}, ""},
		{"multi-line flow", "{\n  schema: a,\n  package: p\n}\n", []string{"a"}, ""},
		{"one JSON value then YAML", "{\"schema\":\"a\"}\n{\"schema\": \"b\",}\n", []string{"a", "b"}, ""},
		{"same line", `{"schema":"a"} {"schema": "b",}`, []string{"a", "b"}, ""},
		{"NaN is a string in YAML", `{"n": NaN, "schema": "a"}`, []string{"a"}, ""},
		{"two JSON values decide", "{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n{\"schema\": \"c\",}", []string{"a", "b"}, "x.json:3:16: invalid JSON: invalid character '}'"},
		{"YAML fails too: the JSON error", "{\"schema\":\"a\",}\n---x\n", nil, "x.json:1:15: invalid JSON: invalid character '}'"},
		// A value that parses but is no catalog object is a decode error
		// too: upstream reads "5: b\nschema: c" as one YAML document.
		{"number then YAML", "{\"schema\":\"a\"}\n5: b\nschema: c\n", []string{"a", "c"}, ""},
		// When the YAML reading fails as well, upstream reports the JSON
		// error; the rest is JSON, and its blobs and problems still count.
		{"no schema, then JSON", "{\"name\":\"x\"}\n{\"schema\":\"b\"}\n{\"name\":\"y\"}\n", []string{"b"}, `x.json:3:1: the object has no "schema" key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collectBlobs(t, fstest.MapFS{"x.json": {Data: []byte(tc.src)}})
			var schemas []string
			for _, l := range got {
				schemas = append(schemas, strings.Split(strings.Fields(l)[1], "/")[0])
			}
			if strings.Join(schemas, ",") != strings.Join(tc.want, ",") {
				t.Errorf("blobs %q, want schemas %q", got, tc.want)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
