package cluster

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// liveObjects are the objects of testdata/live/state.yaml, as JSON.
func liveObjects(t *testing.T) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "live", "state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, d := range splitYAML(b) {
		if onlyComments(d.body) {
			continue
		}
		js, err := yaml.YAMLToJSON(d.body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, js)
	}
	return out
}

// sameObjects fails unless a and b hold the same objects.
func sameObjects(t *testing.T, name string, a, b *State) {
	t.Helper()
	x, y := *a, *b
	x.origin, y.origin, x.Files, y.Files = nil, nil, 0, 0
	if !reflect.DeepEqual(x, y) {
		xj, _ := json.Marshal(x)
		yj, _ := json.Marshal(y)
		t.Errorf("%s: read\n%s\nwant\n%s", name, xj, yj)
	}
}

// TestReadYAMLLists: a List in YAML, read item by item, holds what the
// same objects hold as documents of their own and as a JSON List, in the
// shapes YAML writers give it (kubectl's entries at the key's column,
// entries indented, comments and blank lines between and inside entries,
// a block scalar with blank lines) and in shapes read whole (an entry's
// first key not right after "- ", a line between the columns, an object
// that is not a List with a field "items").
func TestReadYAMLLists(t *testing.T) {
	t.Parallel()
	objs := liveObjects(t)
	var docs []string
	for _, o := range objs {
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(y))
	}
	want, err := Read(context.Background(), writeFiles(t, map[string]string{"docs.yaml": strings.Join(docs, "---\n")}))
	if err != nil {
		t.Fatal(err)
	}
	if len(want.CSVs) != 1 || want.Copied != 1 || len(want.CRDs) != 1 {
		t.Fatalf("the documents: %s", want.Summary())
	}
	list := func(indent string, between string, wide bool) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nitems:\n")
		for i, d := range docs {
			if i > 0 {
				b.WriteString(between)
			}
			entry, rest := "- ", "  "
			if wide && i == 1 {
				entry, rest = "-   ", "    "
			}
			for j, line := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
				if j == 0 {
					b.WriteString(indent + entry + line + "\n")
				} else {
					b.WriteString(indent + rest + line + "\n")
				}
			}
		}
		b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
		return b.String()
	}
	whole, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	if err != nil {
		t.Fatal(err)
	}
	wide := list("", "", true)
	if splitList([]byte(wide)) != nil {
		t.Error("a List with an entry whose first key is further right is cut")
	}
	for name, body := range map[string]string{
		"kubectl":  list("", "", false),
		"indented": list("  ", "", false),
		"comments": list("", "# between\n\n  # indented\n", false),
		"json":     string(whole),
		// Read whole: an entry whose first key is further right.
		"wide entry": wide,
	} {
		s, err := Read(context.Background(), writeFiles(t, map[string]string{"list.yaml": body}))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameObjects(t, name, s, want)
	}

	// A block scalar with blank lines and a comment-like line, in an
	// entry.
	block := "apiVersion: v1\nitems:\n- apiVersion: operators.coreos.com/v1alpha1\n  kind: Subscription\n  metadata:\n    name: etcd\n    namespace: ns1\n" +
		"    annotations:\n      note: |\n        first\n\n        # not a comment\n          indented\n  spec:\n    name: etcd\n    source: community\n    sourceNamespace: olm\nkind: List\n"
	s, err := Read(context.Background(), writeFiles(t, map[string]string{"list.yaml": block}))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Subscriptions) != 1 || s.Subscriptions[0].Annotations["note"] != "first\n\n# not a comment\n  indented\n" {
		t.Errorf("block scalar: %+v", s.Subscriptions)
	}
	if splitList([]byte(block)) == nil {
		t.Error("the block scalar's List is not read item by item")
	}
	for name, body := range map[string]string{
		"between columns": "items:\n- a: 1\n b: 2\nkind: List\n",
		"tab":             "items:\n- a: 1\n\tb: 2\nkind: List\n",
		"not an entry":    "items:\n  a: 1\nkind: List\n",
		"no items":        "kind: List\nitems: []\n",
		"after the items": "items:\n- a: 1\n[x]\n",
	} {
		if l := splitList([]byte(body)); l != nil {
			t.Errorf("%s: cut into %d items", name, len(l.items))
		}
	}

	// An object that is not a List, with a field "items": read whole.
	s, err = Read(context.Background(), writeFiles(t, map[string]string{"x.yaml": "apiVersion: example.com/v1\nkind: Inventory\nmetadata:\n  name: x\nitems:\n- a: 1\n"}))
	if err != nil || s.Skipped["Inventory"] != 1 {
		t.Errorf("not a List: %v, %v", err, s.Skipped)
	}
}

// TestReadYAMLListErrors: an error in an item names the line of the file.
func TestReadYAMLListErrors(t *testing.T) {
	t.Parallel()
	body := "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: [\nkind: List\n"
	_, err := Read(context.Background(), writeFiles(t, map[string]string{"list.yaml": "# a comment\n---\n" + body}))
	if err == nil || !strings.Contains(err.Error(), "list.yaml:12: did not find expected node content") {
		t.Errorf("error %v", err)
	}
	_, err = Read(context.Background(), writeFiles(t, map[string]string{"list.yaml": strings.Replace(body, "name: [", "name: b\n  spec: 1", 1)}))
	if err == nil || !strings.Contains(err.Error(), "list.yaml:7: items[1]: Namespace b: json: cannot unmarshal number") {
		t.Errorf("error %v", err)
	}
}

// TestReadCopiesAndCRDs: a copied CSV is skipped from its metadata alone
// (its spec is not decoded); a CRD is kept without its schemas.
func TestReadCopiesAndCRDs(t *testing.T) {
	t.Parallel()
	s, err := Read(context.Background(), writeFiles(t, map[string]string{"a.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: x\n  namespace: ns2\n  labels:\n    olm.copiedFrom: ns1\nspec: not a spec\n",
		"crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: etcdclusters.etcd.database.coreos.com\n  annotations:\n    big: dropped\nspec:\n  group: etcd.database.coreos.com\n  names: {kind: EtcdCluster, plural: etcdclusters}\n  scope: Namespaced\n" +
			"  versions:\n  - name: v1beta2\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\nstatus:\n  storedVersions: [v1beta2]\n"}))
	if err != nil || s.Copied != 1 || len(s.CSVs) != 0 {
		t.Fatalf("%v, %s", err, s.Summary())
	}
	crd := s.CRD("etcdclusters.etcd.database.coreos.com")
	if crd == nil || crd.Spec.Versions[0].Schema != nil || crd.Annotations != nil || !crd.Spec.Versions[0].Storage || crd.Status.StoredVersions[0] != "v1beta2" || crd.Spec.Names.Kind != "EtcdCluster" {
		t.Errorf("CRD kept as %+v", crd)
	}
}

// TestReadSkippedFromHead: a copied CSV and an object of a kind not read
// are skipped from their apiVersion, kind and metadata alone, in a List
// and as documents of their own: the rest of them is not parsed, so a
// syntax error there is not an error. An object read, or one whose head
// cannot be cut out without parsing (flow style, JSON), is read whole,
// with its errors.
func TestReadSkippedFromHead(t *testing.T) {
	t.Parallel()
	copied := "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: x.v1\n  namespace: ns2\n  labels:\n    olm.copiedFrom: ns1\nspec:\n  description: \"unterminated\n  version: [\n"
	other := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ns1\ndata:\n  a: [\n"
	asItem := func(doc string) string {
		return "- " + strings.ReplaceAll(strings.TrimSuffix(doc, "\n"), "\n", "\n  ") + "\n"
	}
	s, err := Read(context.Background(), writeFiles(t, map[string]string{
		"docs.yaml": copied + "---\n" + other,
		"list.yaml": "apiVersion: v1\nitems:\n" + asItem(copied) + asItem(other) + "kind: List\nmetadata:\n  resourceVersion: \"\"\n",
	}))
	if err != nil || s.Copied != 2 || s.Skipped["ConfigMap"] != 2 || len(s.CSVs) != 0 {
		t.Fatalf("%v, %+v", err, s)
	}

	// Not copied: read whole, the error names the file and line.
	notCopied := strings.Replace(strings.Replace(copied, "    olm.copiedFrom: ns1\n", "    app: x\n", 1), "  description: \"unterminated\n", "", 1)
	_, err = Read(context.Background(), writeFiles(t, map[string]string{"list.yaml": "apiVersion: v1\nitems:\n" + asItem(other) + asItem(notCopied) + "kind: List\n"}))
	if err == nil || !strings.Contains(err.Error(), "list.yaml:18: did not find expected node content") {
		t.Errorf("a CSV not copied, malformed: %v", err)
	}
	// Flow style: read whole.
	_, err = Read(context.Background(), writeFiles(t, map[string]string{"flow.yaml": "{apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: [}\n"}))
	if err == nil || !strings.Contains(err.Error(), "flow.yaml:1: ") {
		t.Errorf("flow style: %v", err)
	}

	for doc, want := range map[string]string{
		copied:                                 "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: x.v1\n  namespace: ns2\n  labels:\n    olm.copiedFrom: ns1\n",
		"kind: A\n# c\napiVersion: v1\nx: 1\n": "kind: A\n# c\napiVersion: v1\n",
		"metadata: {name: a}\nkind: A\n":       "metadata: {name: a}\nkind: A\n",
		"{kind: A, apiVersion: v1}\n":          "",
		"kind: A\n- x\n":                       "",
		"kind: A\n":                            "",
		"--- \nkind: A\napiVersion: v1\n":      "",
		"\"kind\": A\napiVersion: v1\n":        "",
	} {
		if got := string(yamlHead([]byte(doc))); got != want {
			t.Errorf("yamlHead(%q) = %q, want %q", doc, got, want)
		}
	}
}

// TestReadStreamed: a YAML file read from the file a line and an item at a
// time (as a file larger than StreamAbove is) reads as the same file read
// into memory: the same objects, or the same error, for every state of
// testdata/cluster, the Lists of TestReadYAMLLists, bad input, and lines
// longer than the reading buffer.
func TestReadStreamed(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "cluster", "states", "*.yaml"))
	paths = append(paths, filepath.Join("testdata", "live", "state.yaml"), filepath.Join("testdata", "operatorgroup", "state.yaml"))
	var docs []string
	for _, o := range liveObjects(t) {
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(y))
	}
	long := strings.Repeat("x", 700<<10)
	var list strings.Builder
	list.WriteString("# a comment\napiVersion: v1\nitems:\n")
	for i, d := range append(docs, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: long\n  annotations:\n    long: "+long+"\n") {
		for j, line := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
			if j == 0 {
				list.WriteString("- " + line + "\n")
			} else {
				list.WriteString("  " + line + "\n")
			}
		}
		if i == 1 {
			list.WriteString("  # a comment in an item\n\n")
		}
	}
	list.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	dir := writeFiles(t, map[string]string{
		"list.yaml":          list.String(),
		"docs.yaml":          "---\n" + strings.Join(docs, "---\n") + "--- # end\n",
		"no-newline.yaml":    strings.TrimSuffix(subYAML, "\n"),
		"only-comments.yaml": "# nothing\n---\n# else\n",
		"not-a-list.yaml":    "apiVersion: example.com/v1\nkind: Inventory\nmetadata:\n  name: x\nitems:\n- a: 1\n",
		"bad-item.yaml":      strings.Replace(list.String(), "kind: Namespace\n  metadata:\n    name: long", "kind: Namespace\n  metadata:\n    name: [", 1),
		"bad-doc.yaml":       subYAML + "---\nkind: Subscription\nmetadata:\n  name: [\n",
		"no-source.yaml":     strings.Replace(subYAML, "  source: community\n", "", 1),
		"long-line.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: long\n  annotations:\n    long: " + long + "\n",
	})
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, p := range paths {
		mem, merr := Read(context.Background(), p)
		streamed, serr := readPaths(context.Background(), &reader{stream: 1}, []string{p})
		switch {
		case merr != nil || serr != nil:
			if merr == nil || serr == nil || merr.Error() != serr.Error() {
				t.Errorf("%s: in memory: %v; streamed: %v", p, merr, serr)
			}
		default:
			if mem.Files != 1 || streamed.Files != 1 {
				t.Errorf("%s: %d and %d files", p, mem.Files, streamed.Files)
			}
			sameObjects(t, p, streamed, mem)
			if !reflect.DeepEqual(streamed.origin, mem.origin) {
				t.Errorf("%s: origins %v, in memory %v", p, streamed.origin, mem.origin)
			}
		}
	}
	if s, err := Read(context.Background(), filepath.Join(dir, "list.yaml")); err != nil || len(s.Namespaces) != 4 || s.Copied != 1 || len(s.Namespace("long").Annotations["long"]) != 700<<10 {
		t.Errorf("list.yaml: %v", err)
	}
	if _, err := Read(context.Background(), filepath.Join(dir, "bad-item.yaml")); err == nil || !strings.Contains(err.Error(), "bad-item.yaml:272: did not find expected ',' or ']'") {
		t.Errorf("bad-item.yaml: %v", err)
	}
}
