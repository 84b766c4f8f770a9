package kubetest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Lists is an in-process, read-only Kubernetes API server answering LIST
// requests across all namespaces, as the API server answers them:
//
//	GET /api/v1/RESOURCE               (the core group)
//	GET /apis/GROUP/VERSION/RESOURCE
//
// with a `KINDList` holding its objects (as given, sorted by namespace and
// name), paged by the request's limit and continue (and PageSize), errors
// as metav1.Status objects: 404 NotFound for a resource it does not serve,
// 403 Forbidden for one Forbid names, 400 for a continue token it did not
// give. Its objects are recorded ones, added with Add or AddYAML; a
// resource is served once an object of its kind is added or Serve names
// it. It never touches the network beyond loopback.
type Lists struct {
	// PageSize, when > 0, is the most objects a page holds whatever the
	// limit asked (the API server may return fewer than the limit).
	PageSize int
	// User is who the server says is forbidden ("alice" when empty).
	User string
	// Token, when set, is the bearer token every request must carry
	// (401 Unauthorized otherwise).
	Token string

	mu        sync.Mutex
	resources map[string]*listed // path → objects
	forbidden map[string]bool    // path → 403
	requests  []Request
}

type listed struct {
	kind    string
	group   string
	objects []json.RawMessage
	keys    []string // namespace/name of each object, to sort
}

// NewLists returns a server serving nothing; serve it with
// httptest.NewServer or httptest.NewTLSServer.
func NewLists() *Lists {
	return &Lists{resources: map[string]*listed{}, forbidden: map[string]bool{}}
}

// listPath is the path of a resource's collection across all namespaces.
func listPath(apiVersion, resource string) string {
	if !strings.Contains(apiVersion, "/") {
		return "/api/" + apiVersion + "/" + resource
	}
	return "/apis/" + apiVersion + "/" + resource
}

// resourceOf is the resource of a kind as the API server names it: the
// kind in lower case, plural (the kinds OLM reads and most others).
func resourceOf(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"):
		return k + "es"
	case strings.HasSuffix(k, "y") && !strings.HasSuffix(k, "ey"):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// Serve serves a resource (e.g. "operators.coreos.com/v1alpha1",
// "installplans") of a kind with no objects yet.
func (l *Lists) Serve(apiVersion, resource, kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.serve(apiVersion, resource, kind)
}

func (l *Lists) serve(apiVersion, resource, kind string) *listed {
	p := listPath(apiVersion, resource)
	if r := l.resources[p]; r != nil {
		return r
	}
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group = ""
	}
	r := &listed{kind: kind, group: group}
	l.resources[p] = r
	return r
}

// Forbid answers 403 Forbidden to lists of the resource.
func (l *Lists) Forbid(apiVersion, resource string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forbidden[listPath(apiVersion, resource)] = true
}

// Add adds an object given as JSON (apiVersion, kind and metadata.name
// required), serving its resource.
func (l *Lists) Add(obj []byte) error {
	return l.add(obj, false)
}

// Put adds an object as Add does, in place of the object of its kind,
// namespace and name when there is one: an object changed in the
// cluster, the change seen whole by the next list.
func (l *Lists) Put(obj []byte) error {
	return l.add(obj, true)
}

func (l *Lists) add(obj []byte, replace bool) error {
	var h struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &h); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	if h.APIVersion == "" || h.Kind == "" || h.Metadata.Name == "" {
		return errors.New("kubetest: an object needs apiVersion, kind and metadata.name")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.serve(h.APIVersion, resourceOf(h.Kind), h.Kind)
	key := h.Metadata.Namespace + "/" + h.Metadata.Name
	if i := slices.Index(r.keys, key); replace && i >= 0 {
		r.objects[i] = bytes.Clone(obj)
		return nil
	}
	r.objects = append(r.objects, bytes.Clone(obj))
	r.keys = append(r.keys, key)
	return nil
}

// Delete removes the objects of a kind (e.g. "operators.coreos.com/v1alpha1",
// "CatalogSource") with that namespace and name; it says whether there
// were any.
func (l *Lists) Delete(apiVersion, kind, namespace, name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.resources[listPath(apiVersion, resourceOf(kind))]
	if r == nil {
		return false
	}
	key, n := namespace+"/"+name, len(r.keys)
	for i := len(r.keys) - 1; i >= 0; i-- {
		if r.keys[i] == key {
			r.keys = slices.Delete(r.keys, i, i+1)
			r.objects = slices.Delete(r.objects, i, i+1)
		}
	}
	return len(r.keys) < n
}

// AddYAML adds the objects of a YAML or JSON stream (several documents;
// a List's items one by one).
func (l *Lists) AddYAML(data []byte) error {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(js, &list); err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
		if strings.HasSuffix(list.Kind, "List") && list.Items != nil {
			for _, it := range list.Items {
				if err := l.Add(it); err != nil {
					return err
				}
			}
			continue
		}
		if err := l.Add(js); err != nil {
			return err
		}
	}
}

// Requests returns the requests received so far.
func (l *Lists) Requests() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.requests...)
}

func (l *Lists) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Accept: r.Header.Get("Accept"), Authorization: r.Header.Get("Authorization"), UserAgent: r.Header.Get("User-Agent"),
	})
	if l.Token != "" && r.Header.Get("Authorization") != "Bearer "+l.Token {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized", "")
		return
	}
	res := l.resources[r.URL.Path]
	if r.Method != http.MethodGet || res == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource", "")
		return
	}
	resource := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	if l.forbidden[r.URL.Path] {
		user := l.User
		if user == "" {
			user = "alice"
		}
		name, scope := resource, "at the cluster scope"
		if res.group != "" {
			name += "." + res.group
		}
		st := &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
			Message: fmt.Sprintf("%s is forbidden: User %q cannot list resource %q in API group %q %s", name, user, resource, res.group, scope),
			Details: &metav1.StatusDetails{Group: res.group, Kind: resource},
		}
		writeObject(w, http.StatusForbidden, st)
		return
	}
	q := r.URL.Query()
	start := 0
	if c := q.Get("continue"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(res.objects) {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "continue key is not valid: "+c, "")
			return
		}
		start = n
	}
	end := len(res.objects)
	if lim, err := strconv.Atoi(q.Get("limit")); err == nil && lim > 0 {
		end = min(end, start+lim)
	}
	if l.PageSize > 0 {
		end = min(end, start+l.PageSize)
	}
	order := make([]int, len(res.objects))
	for i := range order {
		order[i] = i
	}
	// By namespace and name, as the API server lists (its storage's key
	// order).
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(res.keys[a], res.keys[b]) })
	items := make([]json.RawMessage, 0, end-start)
	for _, i := range order[start:end] {
		items = append(items, listItem(res.objects[i], res.group))
	}
	meta := map[string]any{"resourceVersion": "1"}
	if end < len(res.objects) {
		meta["continue"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
		meta["remainingItemCount"] = len(res.objects) - end
	}
	version := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/api/"), "/apis/")
	version = version[:strings.LastIndexByte(version, '/')]
	writeObject(w, http.StatusOK, map[string]any{
		"apiVersion": version, "kind": res.kind + "List", "metadata": meta, "items": items,
	})
}

// listItem is an object as a list holds it: the API server leaves out
// the apiVersion and kind of the items of its built-in kinds (those of
// the core group and of *.k8s.io), not of custom resources.
func listItem(obj json.RawMessage, group string) json.RawMessage {
	if group != "" && !strings.HasSuffix(group, ".k8s.io") {
		return obj
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return obj
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	b, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return b
}

// ServeOLM serves what a cluster with OLM v0 installed serves of the
// kinds OLM reads, with no objects yet: Namespaces, CRDs, and
// operators.coreos.com's CatalogSources, Subscriptions,
// ClusterServiceVersions, InstallPlans (v1alpha1) and OperatorGroups (v1).
func (l *Lists) ServeOLM() {
	l.Serve("v1", "namespaces", "Namespace")
	l.Serve("apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition")
	for _, k := range []string{"CatalogSource", "Subscription", "ClusterServiceVersion", "InstallPlan"} {
		l.Serve("operators.coreos.com/v1alpha1", resourceOf(k), k)
	}
	l.Serve("operators.coreos.com/v1", "operatorgroups", "OperatorGroup")
}
