package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// MaxFileSize is the largest file Read reads: a must-gather's largest
// files are logs, never opened; an object dump larger than this is not
// something kubectl writes for these kinds.
const MaxFileSize = 512 << 20

// Read reads the objects of paths: files of Kubernetes objects as
// `kubectl get -o yaml` or `-o json` writes them (one object, a List,
// several YAML documents; any mix), directories of such files (every
// .yaml, .yml and .json file below), and OpenShift must-gather
// directories (recognized by their namespaces/ and
// cluster-scoped-resources/ directories, of which only the files of the
// kinds read are opened). A file that cannot be read, an object that
// cannot be decoded, one without a field OLM needs, or one read twice with
// different content is an error naming the file and the object.
func Read(ctx context.Context, paths ...string) (*State, error) {
	return readPaths(ctx, &reader{}, paths)
}

// readPaths is Read with the reader r.
func readPaths(ctx context.Context, r *reader, paths []string) (*State, error) {
	r.s = &State{Skipped: map[string]int{}, origin: map[ObjectKey]string{}}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		if !st.IsDir() {
			if err := r.file(ctx, p); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.dir(ctx, p); err != nil {
			return nil, err
		}
	}
	r.s.sort()
	return r.s, nil
}

type reader struct {
	s *State
	// seen holds each object read, to tell a repeated object from a
	// different one of the same name.
	seen map[ObjectKey]any
	// each, when set, takes every object (a List's items one by one)
	// instead of the State: ReadODLM reads its kinds with it.
	each func(where string, h head, js []byte) error
	// stream, when set, is StreamAbove's stand-in (tests).
	stream int64
}

// dir reads a directory: as a must-gather when it is one (or holds one),
// else every object file below it.
func (r *reader) dir(ctx context.Context, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("state: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if isMustGather(p) {
				if err := r.mustGather(ctx, p); err != nil {
					return err
				}
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isObjectFile(p) {
			return nil
		}
		return r.file(ctx, p)
	})
}

func isObjectFile(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// isMustGather reports whether dir is the root of a must-gather's
// resources: it holds namespaces/ or cluster-scoped-resources/.
func isMustGather(dir string) bool {
	for _, sub := range []string{"namespaces", "cluster-scoped-resources"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// The files of a must-gather that hold the kinds read, as `oc adm
// inspect` lays them out (openshift/must-gather's gather_olm runs `oc adm
// inspect -A olm`; docs/cluster.md): one file per object, or a List per
// resource.
var mustGatherFile = regexp.MustCompile(`^(?:` +
	`namespaces/[^/]+/operators\.coreos\.com/(?:catalogsources|subscriptions|clusterserviceversions|operatorgroups|installplans)(?:/[^/]+)?\.ya?ml` +
	`|namespaces/([^/]+)/([^/]+)\.ya?ml` +
	`|cluster-scoped-resources/apiextensions\.k8s\.io/customresourcedefinitions(?:/[^/]+)?\.ya?ml` +
	`|cluster-scoped-resources/core/namespaces(?:/[^/]+)?\.ya?ml` +
	`)$`)

// mustGather reads the files of a must-gather's resources that can hold
// the kinds read; the others (logs, events, every other resource) are not
// opened.
func (r *reader) mustGather(ctx context.Context, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("state: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		m := mustGatherFile.FindStringSubmatch(filepath.ToSlash(rel))
		if m == nil || (m[1] != "" && m[1] != m[2]) { // namespaces/NS/NS.yaml: the Namespace itself
			return nil
		}
		return r.file(ctx, p)
	})
}

// StreamAbove is the size above which a YAML file is not read into
// memory whole: its lines are scanned from the file and each document, or
// each item of a List, read from it when its turn comes (a state dump of
// one List of thousands of CSVs is held an item at a time).
const StreamAbove = 16 << 20

// file reads the objects of one file.
func (r *reader) file(ctx context.Context, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer f.Close()
	var data []byte
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() <= MaxFileSize {
		if st.Size() > r.streamAbove() {
			t := &text{f: f, size: int(st.Size())}
			first, err := t.firstByte()
			if err != nil {
				return fmt.Errorf("state: %s: %w", p, err)
			}
			if first != '{' && first != '[' {
				r.s.Files++
				return r.yamlStream(ctx, p, t)
			}
			// JSON: decoded whole, below.
		}
		// One buffer of the file's size, not ReadAll's doubling ones.
		data = make([]byte, 0, st.Size()+1)
	}
	data, err = readAll(io.LimitReader(f, MaxFileSize+1), data)
	if err != nil {
		return fmt.Errorf("state: %s: %w", p, err)
	}
	if len(data) > MaxFileSize {
		return fmt.Errorf("state: %s: larger than %d MiB: not a file of Kubernetes objects", p, MaxFileSize>>20)
	}
	r.s.Files++
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return r.jsonStream(ctx, p, data)
	}
	return r.yamlStream(ctx, p, &text{data: data, size: len(data)})
}

func (r *reader) streamAbove() int64 {
	if r.stream != 0 {
		return r.stream
	}
	return StreamAbove
}

// text is a file's bytes: in memory, or read from the file a range at a
// time.
type text struct {
	data []byte      // the whole file, when in memory
	f    io.ReaderAt // else the file
	size int
	// scratch holds a short range of the file read whole (an item of a
	// List, by lines).
	scratch []byte
}

// scanBuffer is the buffer of a long range read by lines.
const scanBuffer = 256 << 10

// firstByte is the file's first byte that is not white space; 0 when
// there is none.
func (t *text) firstByte() (byte, error) {
	var first byte
	err := t.lines(0, t.size, func(line []byte, _ int) bool {
		if c := bytes.TrimLeft(line, " \t\r\n"); len(c) > 0 {
			first = c[0]
			return false
		}
		return true
	})
	return first, err
}

// slice is bytes [from, to) of the text: the text's own in memory (not to
// be written to), a new buffer read from the file else.
func (t *text) slice(from, to int) ([]byte, error) {
	if t.f == nil {
		return t.data[from:to:to], nil
	}
	b := make([]byte, to-from)
	if _, err := t.f.ReadAt(b, int64(from)); err != nil && !(errors.Is(err, io.EOF) && to == t.size) {
		return nil, err
	}
	return b, nil
}

// lines calls fn with each line of [from, to) (its "\n" included) and the
// line's offset, until fn returns false. A line is valid only during the
// call.
func (t *text) lines(from, to int, fn func(line []byte, at int) bool) error {
	data, base := t.data, 0
	if t.f != nil && to-from <= scanBuffer {
		if cap(t.scratch) < to-from {
			t.scratch = make([]byte, to-from, max(to-from, 64<<10))
		}
		data, base = t.scratch[:to-from], from
		if _, err := t.f.ReadAt(data, int64(from)); err != nil && !(errors.Is(err, io.EOF) && to == t.size) {
			return err
		}
	}
	if data != nil || t.f == nil {
		at := from
		for line := range bytes.Lines(data[from-base : to-base]) {
			if !fn(line, at) {
				return nil
			}
			at += len(line)
		}
		return nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(t.f, int64(from), int64(to-from)), scanBuffer)
	at := from
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = long[:0:0]
		}
		if len(line) > 0 {
			if !fn(line, at) {
				return nil
			}
			at += len(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readAll is io.ReadAll into buf's capacity.
func readAll(rd io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func (r *reader) jsonStream(ctx context.Context, p string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("state: %s:%d: %v", p, lineAt(data, dec.InputOffset()), err)
		}
		where := p
		if n > 1 {
			where = fmt.Sprintf("%s: document %d", p, n)
		}
		if err := r.document(ctx, where, raw); err != nil {
			return err
		}
	}
}

// yamlLine is the line of a YAML error ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`line (\d+)`)

func (r *reader) yamlStream(ctx context.Context, p string, t *text) error {
	docs, err := splitDocs(t)
	if err != nil {
		return fmt.Errorf("state: %s: %w", p, err)
	}
	for n, d := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		empty, err := onlyCommentsIn(t, d.from, d.to)
		if err != nil {
			return fmt.Errorf("state: %s: %w", p, err)
		}
		if empty {
			continue
		}
		where := p
		if len(docs) > 1 || n > 0 {
			where = fmt.Sprintf("%s:%d", p, d.line)
		}
		l, err := cutList(t, d.from, d.to)
		if err != nil {
			return fmt.Errorf("state: %s: %w", p, err)
		}
		if l != nil {
			if err := r.yamlList(ctx, p, where, d.line, l); err != nil {
				return err
			}
			continue
		}
		body, err := t.slice(d.from, d.to)
		if err != nil {
			return fmt.Errorf("state: %s: %w", p, err)
		}
		if r.skipped(body) {
			continue
		}
		js, err := yamlToJSON(p, d.line, body)
		if err != nil {
			return err
		}
		if err := r.document(ctx, where, js); err != nil {
			return err
		}
	}
	return nil
}

// yamlToJSON converts a YAML document that starts on line first of file
// p, with go-yaml v2's reading of scalars (as sigs.k8s.io/yaml's
// YAMLToJSON does), an error naming the line.
func yamlToJSON(p string, first int, body []byte) ([]byte, error) {
	js, err := canonjson.FromYAML(nil, body)
	if err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
			l, _ := strconv.Atoi(msg[m[2]:m[3]])
			return nil, fmt.Errorf("state: %s:%d: %s", p, first+l-1, strings.TrimPrefix(msg[m[1]:], ": "))
		}
		return nil, fmt.Errorf("state: %s:%d: %s", p, first, msg)
	}
	return js, nil
}

// yamlList reads a List whose items splitList cut apart, item by item: a
// List of hundreds of CSVs is never held decoded as a whole. It reads as
// document reads the List converted whole.
func (r *reader) yamlList(ctx context.Context, p, where string, first int, l *yamlList) error {
	js, err := yamlToJSON(p, first, l.header)
	if err != nil {
		return err
	}
	var h head
	if err := json.Unmarshal(js, &h); err != nil {
		return fmt.Errorf("state: %s: not a Kubernetes object: %v", where, err)
	}
	if !strings.HasSuffix(h.Kind, "List") {
		// An object with a field "items": read whole.
		whole, err := l.t.slice(l.from, l.to)
		if err != nil {
			return fmt.Errorf("state: %s: %w", p, err)
		}
		js, err := yamlToJSON(p, first, whole)
		if err != nil {
			return err
		}
		return r.document(ctx, where, js)
	}
	var buf []byte
	for i, it := range l.items {
		if err := ctx.Err(); err != nil {
			return err
		}
		if buf, err = l.item(i, buf); err != nil {
			return fmt.Errorf("state: %s: %w", p, err)
		}
		if r.skipped(buf) {
			continue
		}
		js, err := yamlToJSON(p, first+it.line-1, buf)
		if err != nil {
			return err
		}
		// The item's own line: a List of thousands of objects is one
		// document.
		if err := r.document(ctx, fmt.Sprintf("%s:%d: items[%d]", p, first+it.line-1, i), js); err != nil {
			return err
		}
	}
	return nil
}

// skipped reports whether a YAML document is an object the State does
// not keep, judged from its apiVersion, kind and metadata alone, and then
// counts it: a copied CSV, or a kind not read. The rest of such an object
// is never converted (most of a large state's or must-gather's bytes are
// copied CSVs). A document whose head cannot be cut out that way, a List,
// or an object read is not skipped here: document reads it whole, with
// its errors.
func (r *reader) skipped(doc []byte) bool {
	if r.each != nil {
		return false
	}
	hd := yamlHead(doc)
	if hd == nil {
		return false
	}
	js, err := canonjson.FromYAML(nil, hd)
	if err != nil {
		return false
	}
	var h head
	if json.Unmarshal(js, &h) != nil || h.Kind == "" || h.APIVersion == "" || strings.HasSuffix(h.Kind, "List") {
		return false
	}
	switch k := readKind(h); {
	case k == "":
		r.s.Skipped[h.Kind]++
		return true
	case k == KindCSV && v1alpha1.IsCopied(&h.Metadata):
		r.s.Copied++
		return true
	}
	return false
}

// yamlHead cuts the top-level apiVersion, kind and metadata of a YAML
// document out of it (a block mapping at column 0, as kubectl writes
// objects), without parsing it; nil when the document is not of that
// shape.
func yamlHead(doc []byte) []byte {
	var out []byte
	in, keys := false, 0
	for line := range bytes.Lines(doc) {
		if len(line) == 0 {
			continue
		}
		switch c := line[0]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '#':
			// inside the key before, or blank
		case c == '-' && len(line) > 2 && line[1] == '-' && line[2] == '-':
			return nil // a document marker or directive: read whole
		case c == '%' || c == '{' || c == '[' || c == '-' || c == '!' || c == '&' || c == '*' || c == '?':
			return nil
		default:
			in = false
			for _, k := range []string{"apiVersion:", "kind:", "metadata:"} {
				if bytes.HasPrefix(line, []byte(k)) {
					in = true
					keys++
				}
			}
		}
		if in {
			out = append(out, line...)
			if line[len(line)-1] != '\n' {
				out = append(out, '\n')
			}
		}
	}
	if keys < 2 {
		return nil
	}
	return out
}

// readKind is the kind under which the State keeps an object of h's
// apiVersion and kind; "" for an object it does not read.
func readKind(h head) string {
	group, _, ok := strings.Cut(h.APIVersion, "/")
	if !ok {
		group = ""
	}
	switch {
	case h.Kind == KindNamespace && group == "":
		return KindNamespace
	case group == operatorsGroup && (h.Kind == KindCatalogSource || h.Kind == KindSubscription || h.Kind == KindCSV || h.Kind == KindOperatorGroup || h.Kind == KindInstallPlan):
		return h.Kind
	case group == apiextensionsGroup && h.Kind == KindCRD:
		return KindCRD
	}
	return ""
}

// yamlList is a YAML List document cut apart: the document without its
// items (their place holding "items: []"), and where each item is.
type yamlList struct {
	t        *text
	from, to int // the document in t
	header   []byte
	items    []listItem
	col      int // the column of the items' "-"
}

// listItem is an item of a yamlList: its bytes in the text, and the
// document's line it starts on.
type listItem struct{ start, end, line int }

// item returns item i de-indented, as a document of its own, in buf.
func (l *yamlList) item(i int, buf []byte) ([]byte, error) {
	it := l.items[i]
	buf = buf[:0]
	first := true
	err := l.t.lines(it.start, it.end, func(line []byte, _ int) bool {
		line = bytes.TrimRight(line, "\r\n")
		content := bytes.TrimLeft(line, " ")
		switch {
		case !first && len(line)-len(content) < l.col+2 && len(content) > 0 && content[0] == '#':
			// a comment left of the item's lines: dropped, its line kept
		case first:
			buf = append(buf, bytes.TrimLeft(line[l.col+1:], " ")...)
			first = false
		case len(line) > l.col+2:
			buf = append(buf, line[l.col+2:]...)
		}
		buf = append(buf, '\n')
		return true
	})
	return buf, err
}

// splitList is cutList of a document in memory.
func splitList(body []byte) *yamlList {
	l, _ := cutList(&text{data: body, size: len(body)}, 0, len(body))
	return l
}

// cutList cuts a List document, bytes [from, to) of t, as kubectl and
// `oc adm inspect` write it (a top-level "items:" whose entries start
// with "- " in one column, every other line of an entry indented past
// it) into its items, without parsing or copying it; nil when the
// document is not such a List (its kind is checked by the caller, from
// the header), or when any line does not fit that shape: the document is
// then converted whole.
func cutList(t *text, from, to int) (*yamlList, error) {
	l := &yamlList{t: t, from: from, to: to, col: -1}
	n := 0
	itemsAt, end := -1, -1 // the offsets of the "items:" line and of what follows the items
	ok := true
	err := t.lines(from, to, func(line []byte, at int) bool {
		n++
		if end >= 0 {
			// Whatever follows the items must be top-level keys and what
			// they hold, as kubectl writes kind and metadata after them.
			if t := bytes.TrimRight(line, " \t\r\n"); len(t) > 0 && t[0] != ' ' && t[0] != '#' && !isKey(t) {
				ok = false
			}
			return ok
		}
		if itemsAt < 0 {
			if string(bytes.TrimRight(line, " \t\r\n")) == "items:" {
				itemsAt = at
			}
			return true
		}
		t := bytes.TrimRight(line, "\r\n")
		content := bytes.TrimLeft(t, " ")
		ind := len(t) - len(content)
		switch {
		case len(bytes.TrimSpace(content)) == 0:
			return true
		case content[0] == '\t':
			ok = false
			return false
		case l.col < 0 && content[0] == '#':
			return true
		case l.col < 0:
			if !isEntry(content) {
				ok = false
				return false
			}
			l.col = ind
		}
		switch {
		case ind == l.col && isEntry(content):
			// The entry's first key, if on this line, must be where the
			// entry's other lines are indented to.
			if len(content) > 2 && content[2] == ' ' {
				ok = false
				return false
			}
			if len(l.items) > 0 {
				l.items[len(l.items)-1].end = at
			}
			l.items = append(l.items, listItem{start: at, line: n})
		case ind >= l.col+2:
		case content[0] == '#':
		case ind == 0 && isKey(content):
			end = at
		default:
			ok = false
		}
		return ok
	})
	if err != nil || !ok || l.col < 0 {
		return nil, err
	}
	if end < 0 {
		end = to
	}
	l.items[len(l.items)-1].end = end
	before, err := t.slice(from, itemsAt)
	if err != nil {
		return nil, err
	}
	after, err := t.slice(end, to)
	if err != nil {
		return nil, err
	}
	l.header = slices.Concat(before, []byte("items: []\n"), after)
	return l, nil
}

// isEntry reports whether a line's content starts a sequence entry.
func isEntry(content []byte) bool {
	return content[0] == '-' && (len(content) == 1 || content[1] == ' ')
}

// isKey reports whether a line's content is a plain "key:" of a mapping.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]*:(?: |$)`)

func isKey(content []byte) bool { return plainKey.Match(content) }

// yamlDoc is a document of a YAML stream: where it is in its text, the
// line it starts on, and (splitYAML) its bytes.
type yamlDoc struct {
	from, to int
	line     int
	body     []byte
}

// splitYAML is splitDocs of a stream in memory, with each document's
// bytes (not copied).
func splitYAML(data []byte) []yamlDoc {
	docs, _ := splitDocs(&text{data: data, size: len(data)})
	for i := range docs {
		docs[i].body = data[docs[i].from:docs[i].to:docs[i].to]
	}
	return docs
}

// splitDocs splits a YAML stream at its "---" lines, as apimachinery's
// YAMLReader does (a separator may be followed by spaces and a comment
// only), keeping where each document starts.
func splitDocs(t *text) ([]yamlDoc, error) {
	var docs []yamlDoc
	cur := yamlDoc{line: 1}
	n := 0
	err := t.lines(0, t.size, func(line []byte, at int) bool {
		n++
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			if t := bytes.TrimSpace(rest); len(t) == 0 || t[0] == '#' {
				cur.to = at
				docs = append(docs, cur)
				cur = yamlDoc{from: at + len(line), line: n + 1}
			}
		}
		return true
	})
	cur.to = t.size
	return append(docs, cur), err
}

// onlyComments reports whether a YAML document holds nothing but blank
// lines and comments.
func onlyComments(doc []byte) bool {
	empty, _ := onlyCommentsIn(&text{data: doc, size: len(doc)}, 0, len(doc))
	return empty
}

// onlyCommentsIn is onlyComments of bytes [from, to) of t.
func onlyCommentsIn(t *text, from, to int) (bool, error) {
	empty := true
	err := t.lines(from, to, func(line []byte, _ int) bool {
		if c := bytes.TrimSpace(line); len(c) > 0 && c[0] != '#' {
			empty = false
		}
		return empty
	})
	return empty, err
}

func lineAt(data []byte, off int64) int {
	return bytes.Count(data[:min(int(off), len(data))], []byte("\n")) + 1
}

// head is what every object has.
type head struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

// document reads one object, or the items of a List.
func (r *reader) document(ctx context.Context, where string, js []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil
	}
	var h head
	if err := json.Unmarshal(js, &h); err != nil {
		return fmt.Errorf("state: %s: not a Kubernetes object: %v", where, err)
	}
	if h.Kind == "" {
		return fmt.Errorf("state: %s: not a Kubernetes object: it has no kind", where)
	}
	if strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		for i, item := range h.Items {
			if err := r.document(ctx, fmt.Sprintf("%s: items[%d]", where, i), item); err != nil {
				return err
			}
		}
		return nil
	}
	if r.each != nil {
		return r.each(where, h, js)
	}
	group, _, _ := strings.Cut(h.APIVersion, "/")
	if !strings.Contains(h.APIVersion, "/") {
		group = ""
	}
	switch {
	case h.Kind == KindNamespace && group == "":
		return add(r, where, h, js, &r.s.Namespaces, false, checkNothing[*corev1.Namespace])
	case group == operatorsGroup && h.Kind == KindCatalogSource:
		return add(r, where, h, js, &r.s.CatalogSources, true, checkCatalogSource)
	case group == operatorsGroup && h.Kind == KindSubscription:
		return add(r, where, h, js, &r.s.Subscriptions, true, checkSubscription)
	case group == operatorsGroup && h.Kind == KindCSV:
		if v1alpha1.IsCopied(&h.Metadata) {
			// A copy, by its labels or annotations: not decoded further
			// (a must-gather holds one per namespace of every
			// AllNamespaces operator).
			r.s.Copied++
			return nil
		}
		var csv v1alpha1.ClusterServiceVersion
		if err := decode(where, h, js, &csv); err != nil {
			return err
		}
		if csv.IsCopied() {
			r.s.Copied++
			return nil
		}
		return keep(r, where, h, pruneCSV(&csv), &r.s.CSVs, true, checkCSV)
	case group == operatorsGroup && h.Kind == KindOperatorGroup:
		// v1 and v1alpha2 have the same fields OLM reads.
		return add(r, where, h, js, &r.s.OperatorGroups, true, checkNothing[*operatorsv1.OperatorGroup])
	case group == operatorsGroup && h.Kind == KindInstallPlan:
		var ip v1alpha1.InstallPlan
		if err := decode(where, h, js, &ip); err != nil {
			return err
		}
		for i := range ip.Status.Plan {
			if ip.Status.Plan[i] != nil {
				ip.Status.Plan[i].Resource.Manifest = "" // kept out of memory: the plan's objects are not read back
			}
		}
		return keep(r, where, h, &ip, &r.s.InstallPlans, true, checkNothing[*v1alpha1.InstallPlan])
	case group == apiextensionsGroup && h.Kind == KindCRD:
		if h.APIVersion != "apiextensions.k8s.io/v1" {
			r.s.Skipped[h.Kind+" ("+h.APIVersion+")"]++
			return nil
		}
		var c crdKept
		if err := decode(where, h, js, &c); err != nil {
			return err
		}
		return keep(r, where, h, c.crd(), &r.s.CRDs, false, checkNothing[*apiextensionsv1.CustomResourceDefinition])
	}
	r.s.Skipped[h.Kind]++
	return nil
}

func decode(where string, h head, js []byte, into any) error {
	if err := json.Unmarshal(js, into); err != nil {
		return fmt.Errorf("state: %s: %s %s: %v", where, h.Kind, objectName(h), err)
	}
	return nil
}

func objectName(h head) string {
	if h.Metadata.Namespace != "" {
		return h.Metadata.Namespace + "/" + h.Metadata.Name
	}
	return h.Metadata.Name
}

type object interface {
	namedObject
	comparable
}

// add decodes an object and keeps it.
func add[T object](r *reader, where string, h head, js []byte, list *[]T, namespaced bool, check func(T) error) error {
	var obj T
	// T is a pointer type: decode into a new value of what it points to.
	v := reflect.New(reflect.TypeOf(obj).Elem())
	if err := decode(where, h, js, v.Interface()); err != nil {
		return err
	}
	return keep(r, where, h, v.Interface().(T), list, namespaced, check)
}

// keep checks an object and adds it to list, unless the same object was
// read before.
func keep[T object](r *reader, where string, h head, obj T, list *[]T, namespaced bool, check func(T) error) error {
	name := objectName(h)
	switch {
	case obj.GetName() == "":
		return fmt.Errorf("state: %s: %s without metadata.name", where, h.Kind)
	case namespaced && obj.GetNamespace() == "":
		return fmt.Errorf("state: %s: %s %s without metadata.namespace (a namespaced kind)", where, h.Kind, name)
	}
	if err := check(obj); err != nil {
		return fmt.Errorf("state: %s: %s %s: %v", where, h.Kind, name, err)
	}
	k := ObjectKey{h.Kind, obj.GetNamespace(), obj.GetName()}
	if r.seen == nil {
		r.seen = map[ObjectKey]any{}
	}
	if old, ok := r.seen[k]; ok {
		if reflect.DeepEqual(old, obj) {
			return nil // the same object twice: a dump and a must-gather of one cluster
		}
		return fmt.Errorf("state: %s: %s is also in %s, with other content: give one of them", where, k, r.s.origin[k])
	}
	r.seen[k] = obj
	r.s.origin[k] = where
	*list = append(*list, obj)
	return nil
}

func checkNothing[T any](T) error { return nil }

func checkSubscription(s *v1alpha1.Subscription) error {
	switch {
	case s.Spec == nil:
		return errors.New("it has no spec")
	case s.Spec.Package == "":
		return errors.New("spec.name (the package) is missing")
	case s.Spec.CatalogSource == "":
		return errors.New("spec.source (the CatalogSource) is missing")
	case s.Spec.CatalogSourceNamespace == "":
		return errors.New("spec.sourceNamespace is missing")
	}
	return nil
}

func checkCatalogSource(c *v1alpha1.CatalogSource) error {
	if c.Spec.SourceType == "" {
		return errors.New("spec.sourceType is missing")
	}
	return nil
}

func checkCSV(c *v1alpha1.ClusterServiceVersion) error {
	for _, crd := range c.Spec.CustomResourceDefinitions.Owned {
		if crd.Name == "" {
			return errors.New("an owned CRD (spec.customresourcedefinitions.owned) has no name")
		}
	}
	return nil
}

// csvAnnotations are the annotations of a CSV the answers read; the others
// (alm-examples, descriptions) are dropped.
var csvAnnotations = []string{
	"operatorframework.io/properties",
	operatorsv1.OperatorGroupAnnotationKey,
	operatorsv1.OperatorGroupNamespaceAnnotationKey,
	operatorsv1.OperatorGroupTargetsAnnotationKey,
	"olm.skipRange",
}

// pruneCSV keeps what OLM's resolution and OperatorGroup rules read of an
// installed CSV.
func pruneCSV(c *v1alpha1.ClusterServiceVersion) *v1alpha1.ClusterServiceVersion {
	out := &v1alpha1.ClusterServiceVersion{TypeMeta: c.TypeMeta}
	out.Name, out.Namespace, out.UID, out.Labels = c.Name, c.Namespace, c.UID, c.Labels
	for _, k := range csvAnnotations {
		if v, ok := c.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	s := &out.Spec
	s.Version, s.Replaces, s.Skips, s.InstallModes = c.Spec.Version, c.Spec.Replaces, c.Spec.Skips, c.Spec.InstallModes
	s.WebhookDefinitions = c.Spec.WebhookDefinitions
	for _, d := range c.Spec.CustomResourceDefinitions.Owned {
		s.CustomResourceDefinitions.Owned = append(s.CustomResourceDefinitions.Owned, v1alpha1.CRDDescription{Name: d.Name, Version: d.Version, Kind: d.Kind})
	}
	for _, d := range c.Spec.CustomResourceDefinitions.Required {
		s.CustomResourceDefinitions.Required = append(s.CustomResourceDefinitions.Required, v1alpha1.CRDDescription{Name: d.Name, Version: d.Version, Kind: d.Kind})
	}
	for _, d := range c.Spec.APIServiceDefinitions.Owned {
		s.APIServiceDefinitions.Owned = append(s.APIServiceDefinitions.Owned, v1alpha1.APIServiceDescription{Name: d.Name, Group: d.Group, Version: d.Version, Kind: d.Kind})
	}
	for _, d := range c.Spec.APIServiceDefinitions.Required {
		s.APIServiceDefinitions.Required = append(s.APIServiceDefinitions.Required, v1alpha1.APIServiceDescription{Name: d.Name, Group: d.Group, Version: d.Version, Kind: d.Kind})
	}
	out.Status.Phase, out.Status.Reason, out.Status.Message = c.Status.Phase, c.Status.Reason, c.Status.Message
	return out
}

// crdKept is what is kept of a CRD: its names, versions (without their
// schemas, columns and subresources), conversion and status. A cluster's
// CRDs are most of a state's bytes; the answers read their names and
// stored versions (Effects).
type crdKept struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name            string            `json:"name"`
		UID             types.UID         `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Generation      int64             `json:"generation"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Group    string                                        `json:"group"`
		Names    apiextensionsv1.CustomResourceDefinitionNames `json:"names"`
		Scope    apiextensionsv1.ResourceScope                 `json:"scope"`
		Versions []struct {
			Name               string  `json:"name"`
			Served             bool    `json:"served"`
			Storage            bool    `json:"storage"`
			Deprecated         bool    `json:"deprecated"`
			DeprecationWarning *string `json:"deprecationWarning"`
		} `json:"versions"`
		Conversion            *apiextensionsv1.CustomResourceConversion `json:"conversion"`
		PreserveUnknownFields bool                                      `json:"preserveUnknownFields"`
	} `json:"spec"`
	Status apiextensionsv1.CustomResourceDefinitionStatus `json:"status"`
}

func (c *crdKept) crd() *apiextensionsv1.CustomResourceDefinition {
	out := &apiextensionsv1.CustomResourceDefinition{TypeMeta: c.TypeMeta, Status: c.Status}
	m := &c.Metadata
	out.Name, out.UID, out.ResourceVersion, out.Generation, out.Labels = m.Name, m.UID, m.ResourceVersion, m.Generation, m.Labels
	s := &out.Spec
	s.Group, s.Names, s.Scope, s.Conversion, s.PreserveUnknownFields = c.Spec.Group, c.Spec.Names, c.Spec.Scope, c.Spec.Conversion, c.Spec.PreserveUnknownFields
	for _, v := range c.Spec.Versions {
		s.Versions = append(s.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v.Name, Served: v.Served, Storage: v.Storage,
			Deprecated: v.Deprecated, DeprecationWarning: v.DeprecationWarning})
	}
	return out
}

// sort puts every list in order: by namespace and name.
func (s *State) sort() {
	sortObjects(s.Namespaces)
	sortObjects(s.CatalogSources)
	sortObjects(s.Subscriptions)
	sortObjects(s.CSVs)
	sortObjects(s.OperatorGroups)
	sortObjects(s.InstallPlans)
	sortObjects(s.CRDs)
}

func sortObjects[T namedObject](objs []T) {
	slices.SortStableFunc(objs, func(a, b T) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}
