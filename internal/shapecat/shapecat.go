// Package shapecat generates synthetic file-based catalogs of extreme
// shapes: the cases where a cost that grows with a catalog's shape rather
// than its bytes would show (many channels in one package, a long replaces
// chain, one bundle in many channels, many custom blobs, a long skips
// list, wide skipRanges). The Go
// benchmarks of the loader, the model, the schema check and the serve
// index use them, and `make bench` measures whole commands on them
// (hack/shapecat writes them to disk).
//
// Every generated catalog is valid: `opm validate` passes on it. Blobs are
// written as `opm render` writes them (JSON, keys sorted, 4-space indent),
// one package per file.
package shapecat

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"
)

// Shape is one kind of catalog.
type Shape struct {
	// Name identifies the shape on command lines.
	Name string
	// Doc says what the catalog holds, with N the size parameter.
	Doc string
	// N is the size the project's targets are set for.
	N int
	// write writes the catalog with size n.
	write func(w *writer, n int)
}

// Shapes are the shapes, in the order `make bench` runs them.
var Shapes = []Shape{
	{Name: "channels", N: 10000, Doc: "one package with N channels of one bundle each", write: manyChannels},
	{Name: "chain", N: 10000, Doc: "one package with one channel of N bundles, each replacing the previous one", write: longChain},
	{Name: "shared-bundle", N: 1000, Doc: "one package whose only bundle is in N channels", write: sharedBundle},
	{Name: "custom", N: 300000, Doc: "one package of one bundle, and N small blobs of a custom schema", write: smallCustom},
	{Name: "custom-large", N: 20000, Doc: "one package of one bundle, and N custom blobs of about 4 KB with nested lists", write: largeCustom},
	{Name: "deep", N: 9000, Doc: "one package of one bundle, and a custom blob holding a list nested N deep", write: deepList},
	{Name: "skips", N: 10000, Doc: "one package with one channel of N bundles in a replaces chain, whose head also skips every bundle below its predecessor (a skips list of N-2 names)", write: longSkips},
	{Name: "skiprange", N: 10000, Doc: "one package with one channel of N bundles in a replaces chain, each with a skipRange that covers every older version", write: wideSkipRanges},
}

// Lookup returns the shape called name.
func Lookup(name string) (Shape, bool) {
	i := slices.IndexFunc(Shapes, func(s Shape) bool { return s.Name == name })
	if i < 0 {
		return Shape{}, false
	}
	return Shapes[i], true
}

// Names lists the shapes' names.
func Names() []string {
	names := make([]string, len(Shapes))
	for i, s := range Shapes {
		names[i] = s.Name
	}
	return names
}

// Package is the name of the package every shape's catalog holds.
const Package = "shape"

// File is the path of the catalog file, relative to the catalog root.
const File = Package + "/catalog.json"

// Write writes the shape's catalog file (see File) with size n (the
// shape's N when n <= 0) to out.
func (s Shape) Write(out io.Writer, n int) error {
	if n <= 0 {
		n = s.N
	}
	w := &writer{bw: bufio.NewWriterSize(out, 256<<10)}
	s.write(w, n)
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// Bytes returns the shape's catalog file with size n.
func (s Shape) Bytes(n int) []byte {
	var sb strings.Builder
	_ = s.Write(&sb, n) // a strings.Builder does not fail
	return []byte(sb.String())
}

// FS returns the shape's catalog with size n as an in-memory file system.
func (s Shape) FS(n int) fstest.MapFS {
	return fstest.MapFS{File: &fstest.MapFile{Data: s.Bytes(n), Mode: 0o644}}
}

type writer struct {
	bw  *bufio.Writer
	err error
}

// blob writes v as opm render does: sorted keys, 4-space indent, no HTML
// escaping.
func (w *writer) blob(v any) {
	if w.err != nil {
		return
	}
	enc := json.NewEncoder(w.bw)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	w.err = enc.Encode(v)
}

type obj = map[string]any

func pkgBlob(defaultChannel string) obj {
	return obj{"schema": "olm.package", "name": Package, "defaultChannel": defaultChannel}
}

func channelBlob(name string, entries []obj) obj {
	return obj{"schema": "olm.channel", "package": Package, "name": name, "entries": entries}
}

func bundleName(i int) string { return fmt.Sprintf("%s.v1.0.%d", Package, i) }

// bundleBlob is a bundle as real catalogs have them: its package, the API
// it provides, a label property, and its CSV as a bundle object.
func bundleBlob(i int) obj {
	name, version := bundleName(i), fmt.Sprintf("1.0.%d", i)
	csv, _ := json.Marshal(obj{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata":   obj{"name": name, "annotations": obj{"containerImage": "quay.io/shape/operator:v" + version}},
		"spec": obj{
			"version":     version,
			"displayName": "Shape",
			"customresourcedefinitions": obj{"owned": []obj{{
				"name": "things.shape.example.com", "version": "v1", "kind": "Thing",
			}}},
		},
	})
	return obj{
		"schema":  "olm.bundle",
		"name":    name,
		"package": Package,
		"image":   fmt.Sprintf("quay.io/shape/bundle:v%s", version),
		"properties": []obj{
			{"type": "olm.gvk", "value": obj{"group": "shape.example.com", "kind": "Thing", "version": "v1"}},
			{"type": "olm.package", "value": obj{"packageName": Package, "version": version}},
			{"type": "shape.example.com/label", "value": obj{"tier": "bench"}},
			{"type": "olm.bundle.object", "value": obj{"data": base64.StdEncoding.EncodeToString(csv)}},
		},
		"relatedImages": []obj{
			{"name": "operator", "image": "quay.io/shape/operator:v" + version},
		},
	}
}

func manyChannels(w *writer, n int) {
	w.blob(pkgBlob("channel-0"))
	for i := range n {
		w.blob(channelBlob(fmt.Sprintf("channel-%d", i), []obj{{"name": bundleName(i)}}))
	}
	for i := range n {
		w.blob(bundleBlob(i))
	}
}

func longChain(w *writer, n int) {
	w.blob(pkgBlob("stable"))
	entries := make([]obj, n)
	for i := range n {
		e := obj{"name": bundleName(i)}
		if i > 0 {
			e["replaces"] = bundleName(i - 1)
		}
		entries[i] = e
	}
	w.blob(channelBlob("stable", entries))
	for i := range n {
		w.blob(bundleBlob(i))
	}
}

func sharedBundle(w *writer, n int) {
	w.blob(pkgBlob("channel-0"))
	for i := range n {
		w.blob(channelBlob(fmt.Sprintf("channel-%d", i), []obj{{"name": bundleName(0)}}))
	}
	w.blob(bundleBlob(0))
}

func oneBundle(w *writer) {
	w.blob(pkgBlob("stable"))
	w.blob(channelBlob("stable", []obj{{"name": bundleName(0)}}))
	w.blob(bundleBlob(0))
}

func smallCustom(w *writer, n int) {
	oneBundle(w)
	for i := range n {
		w.blob(obj{"schema": "shape.note", "package": Package, "name": fmt.Sprintf("note-%d", i), "value": i})
	}
}

func largeCustom(w *writer, n int) {
	oneBundle(w)
	for i := range n {
		items := make([]obj, 12)
		for j := range items {
			items[j] = obj{
				"id":     fmt.Sprintf("item-%d-%d", i, j),
				"labels": []string{"alpha", "beta", fmt.Sprintf("gamma-%d", j)},
				"spec":   obj{"replicas": j, "enabled": j%2 == 0, "image": fmt.Sprintf("quay.io/shape/item:%d", j)},
			}
		}
		w.blob(obj{"schema": "shape.config", "package": Package, "name": fmt.Sprintf("config-%d", i), "items": items})
	}
}

// deepList writes a custom blob whose value is a list nested n deep
// ([[[...]]]), within encoding/json's limit of 10,000 levels: a decoder
// or encoder that recurses per level, with a frame or a copy per level,
// shows here.
func deepList(w *writer, n int) {
	oneBundle(w)
	if w.err != nil {
		return
	}
	_, w.err = fmt.Fprintf(w.bw, "{\n    \"name\": \"deep\",\n    \"package\": %q,\n    \"schema\": \"shape.deep\",\n    \"value\": %s%s\n}\n",
		Package, strings.Repeat("[", n), strings.Repeat("]", n))
}

// chainEntries are n channel entries, each replacing the previous one.
func chainEntries(n int) []obj {
	entries := make([]obj, n)
	for i := range n {
		e := obj{"name": bundleName(i)}
		if i > 0 {
			e["replaces"] = bundleName(i - 1)
		}
		entries[i] = e
	}
	return entries
}

func longSkips(w *writer, n int) {
	w.blob(pkgBlob("stable"))
	entries := chainEntries(n)
	if n > 2 {
		skips := make([]string, n-2)
		for i := range skips {
			skips[i] = bundleName(i)
		}
		entries[n-1]["skips"] = skips
	}
	w.blob(channelBlob("stable", entries))
	for i := range n {
		w.blob(bundleBlob(i))
	}
}

func wideSkipRanges(w *writer, n int) {
	w.blob(pkgBlob("stable"))
	entries := chainEntries(n)
	for i := 1; i < n; i++ {
		entries[i]["skipRange"] = fmt.Sprintf(">=1.0.0 <1.0.%d", i)
	}
	w.blob(channelBlob("stable", entries))
	for i := range n {
		w.blob(bundleBlob(i))
	}
}

// WriteDir writes the shape's catalog with size n under dir (dir/File),
// making the directories it needs.
func (s Shape) WriteDir(dir string, n int) error {
	file := filepath.Join(dir, filepath.FromSlash(File))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, s.Bytes(n), 0o644)
}
