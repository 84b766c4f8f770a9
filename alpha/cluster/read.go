package cluster

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
	"sigs.k8s.io/yaml"
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
	r := &reader{s: &State{Skipped: map[string]int{}, origin: map[ObjectKey]string{}}}
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

// file reads the objects of one file.
func (r *reader) file(ctx context.Context, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
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
	return r.yamlStream(ctx, p, data)
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

func (r *reader) yamlStream(ctx context.Context, p string, data []byte) error {
	docs := splitYAML(data)
	for n, d := range docs {
		if len(bytes.TrimSpace(stripComments(d.body))) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(d.body)
		if err != nil {
			msg := err.Error()
			if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
				l, _ := strconv.Atoi(msg[m[2]:m[3]])
				return fmt.Errorf("state: %s:%d: %s", p, d.line+l-1, strings.TrimPrefix(msg[m[1]:], ": "))
			}
			return fmt.Errorf("state: %s:%d: %s", p, d.line, msg)
		}
		where := p
		if len(docs) > 1 || n > 0 {
			where = fmt.Sprintf("%s:%d", p, d.line)
		}
		if err := r.document(ctx, where, js); err != nil {
			return err
		}
	}
	return nil
}

// yamlDoc is a document of a YAML stream and the line it starts on.
type yamlDoc struct {
	body []byte
	line int
}

// splitYAML splits a YAML stream at its "---" lines, as apimachinery's
// YAMLReader does (a separator may be followed by spaces and a comment
// only), keeping where each document starts.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	cur := yamlDoc{line: 1}
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			if t := bytes.TrimSpace(rest); len(t) == 0 || t[0] == '#' {
				docs = append(docs, cur)
				cur = yamlDoc{line: n + 1}
				continue
			}
		}
		cur.body = append(cur.body, line...)
	}
	return append(docs, cur)
}

// stripComments removes the comment lines of a YAML document, to tell an
// empty document.
func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
		}
	}
	return out
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
		return add(r, where, h, js, &r.s.CRDs, false, checkNothing[*apiextensionsv1.CustomResourceDefinition])
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
