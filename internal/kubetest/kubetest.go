// Package kubetest is an in-process Kubernetes API server for ConfigMaps,
// enough of the real one for a client to get, create and update them:
//
//	GET  /api/v1/namespaces/NS/configmaps/NAME  200, or 404 NotFound
//	POST /api/v1/namespaces/NS/configmaps       201, or 409 AlreadyExists
//	PUT  /api/v1/namespaces/NS/configmaps/NAME  200, 404 NotFound, or 409
//	                                            Conflict on a stale
//	                                            resourceVersion
//
// Like the API server, it decodes request bodies in JSON or in Kubernetes'
// protobuf envelope (what client-go sends for built-in types by default),
// refuses other media types (415), validates ConfigMaps (keys, the 1 MiB
// size; 422 Invalid), sets the fields the server owns (uid,
// resourceVersion, creationTimestamp) and answers in JSON, errors as
// metav1.Status objects. It stores each object as the typed ConfigMap it
// decoded. It never touches the network beyond loopback.
package kubetest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// Request is one request the server received.
type Request struct {
	Method, Path                       string
	Query                              string // the raw query (Lists only)
	ContentType, Accept, Authorization string
	UserAgent                          string
	Body                               []byte
}

// Server holds ConfigMaps by namespace and name. Its zero value is not
// usable; call New.
type Server struct {
	// Token, when set, is the bearer token every request must carry
	// (401 Unauthorized otherwise).
	Token string

	mu       sync.Mutex
	objects  map[string]*corev1.ConfigMap // "ns/name" → object
	requests []Request
	rv       int
}

// New returns an empty server; serve it with httptest.NewServer or
// httptest.NewTLSServer.
func New() *Server {
	return &Server{objects: map[string]*corev1.ConfigMap{}}
}

// Put stores cm as if it had been created through the API, server fields
// included: the test's starting state.
func (s *Server) Put(cm *corev1.ConfigMap) error {
	if cm.Namespace == "" || cm.Name == "" {
		return fmt.Errorf("kubetest: a ConfigMap needs metadata.namespace and metadata.name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cm = cm.DeepCopy()
	s.setServerFields(cm, nil)
	s.objects[cm.Namespace+"/"+cm.Name] = cm
	return nil
}

// PutJSON is Put for a ConfigMap given as JSON.
func (s *Server) PutJSON(b []byte) error {
	var cm corev1.ConfigMap
	if err := json.Unmarshal(b, &cm); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	return s.Put(&cm)
}

// Get returns a copy of the stored ConfigMap ns/name, or nil.
func (s *Server) Get(ns, name string) *corev1.ConfigMap {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cm, ok := s.objects[ns+"/"+name]; ok {
		return cm.DeepCopy()
	}
	return nil
}

// Normalized returns the stored ConfigMap ns/name as indented JSON with
// sorted keys, without the fields the server sets (uid, resourceVersion,
// creationTimestamp, managedFields), or nil.
func (s *Server) Normalized(ns, name string) []byte {
	cm := s.Get(ns, name)
	if cm == nil {
		return nil
	}
	return NormalizedJSON(cm)
}

// NormalizedJSON is the form of cm the goldens hold: indented JSON, keys
// sorted, without the fields the server sets.
func NormalizedJSON(cm *corev1.ConfigMap) []byte {
	cm = cm.DeepCopy()
	cm.UID, cm.ResourceVersion, cm.CreationTimestamp, cm.ManagedFields, cm.Generation = "", "", metav1.Time{}, nil, 0
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	b, err := json.Marshal(cm)
	if err != nil {
		panic(err) // a ConfigMap always encodes
	}
	// Through a map, for sorted keys at every level.
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		panic(err)
	}
	if meta, ok := m["metadata"].(map[string]any); ok && meta["creationTimestamp"] == nil {
		delete(meta, "creationTimestamp")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(m)
	return buf.Bytes()
}

// Keys lists the stored objects as "namespace/name", sorted.
func (s *Server) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

var (
	itemPath       = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/configmaps/([^/]+)$`)
	collectionPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/configmaps$`)
	// validKey is the API server's rule for ConfigMap keys
	// (IsConfigMapKey): at most 253 of these characters, not "." or "..".
	validKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// maxSize is the API server's limit on a ConfigMap's data and binaryData
// together (corev1.MaxSecretSize).
const maxSize = 1 << 20

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path,
		ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"),
		Authorization: r.Header.Get("Authorization"), UserAgent: r.Header.Get("User-Agent"),
		Body: body,
	})
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized", "")
		return
	}
	if m := itemPath.FindStringSubmatch(r.URL.Path); m != nil {
		switch r.Method {
		case http.MethodGet:
			s.get(w, m[1], m[2])
		case http.MethodPut:
			s.update(w, r, body, m[1], m[2])
		default:
			writeStatus(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource", "")
		}
		return
	}
	if m := collectionPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost {
		s.create(w, r, body, m[1])
		return
	}
	writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource", "")
}

func (s *Server) get(w http.ResponseWriter, ns, name string) {
	cm, ok := s.objects[ns+"/"+name]
	if !ok {
		writeNotFound(w, name)
		return
	}
	writeObject(w, http.StatusOK, cm)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, body []byte, ns string) {
	cm, ok := decodeBody(w, r, body)
	if !ok {
		return
	}
	if cm.Name == "" && cm.GenerateName != "" {
		cm.Name = fmt.Sprintf("%s%05d", cm.GenerateName, s.rv+1)
	}
	if !checkObject(w, cm, ns) {
		return
	}
	if _, exists := s.objects[ns+"/"+cm.Name]; exists {
		writeStatus(w, http.StatusConflict, "AlreadyExists", fmt.Sprintf("configmaps %q already exists", cm.Name), cm.Name)
		return
	}
	cm.Namespace = ns
	s.setServerFields(cm, nil)
	s.objects[ns+"/"+cm.Name] = cm
	writeObject(w, http.StatusCreated, cm)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, body []byte, ns, name string) {
	cm, ok := decodeBody(w, r, body)
	if !ok {
		return
	}
	if cm.Name != name {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "the name of the object ("+cm.Name+") does not match the name on the URL ("+name+")", "")
		return
	}
	if !checkObject(w, cm, ns) {
		return
	}
	old, exists := s.objects[ns+"/"+name]
	if !exists {
		writeNotFound(w, name)
		return
	}
	if cm.ResourceVersion != "" && cm.ResourceVersion != old.ResourceVersion {
		writeStatus(w, http.StatusConflict, "Conflict", fmt.Sprintf("Operation cannot be fulfilled on configmaps %q: the object has been modified; please apply your changes to the latest version and try again", name), name)
		return
	}
	cm.Namespace = ns
	s.setServerFields(cm, old)
	s.objects[ns+"/"+name] = cm
	writeObject(w, http.StatusOK, cm)
}

// decodeBody decodes a ConfigMap sent as JSON or as protobuf.
func decodeBody(w http.ResponseWriter, r *http.Request, body []byte) (*corev1.ConfigMap, bool) {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "application/json" && mt != "application/vnd.kubernetes.protobuf" {
		writeStatus(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor; got %q", ct), "")
		return nil, false
	}
	info, ok := runtimeSerializer(mt)
	if !ok {
		writeStatus(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "no serializer for "+mt, "")
		return nil, false
	}
	obj, gvk, err := info.Decode(body, nil, nil)
	if err != nil {
		writeStatus(w, http.StatusBadRequest, "BadRequest", err.Error(), "")
		return nil, false
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		writeStatus(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("expected a v1 ConfigMap, got %v", gvk), "")
		return nil, false
	}
	return cm, true
}

// checkObject applies the API server's ConfigMap validation.
func checkObject(w http.ResponseWriter, cm *corev1.ConfigMap, ns string) bool {
	if cm.Namespace != "" && cm.Namespace != ns {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request", "")
		return false
	}
	var causes []string
	if cm.Name == "" {
		causes = append(causes, "metadata.name: Required value: name or generateName is required")
	}
	size := 0
	bad := func(field, k string) bool {
		if !validKey.MatchString(k) || len(k) > 253 || k == "." || k == ".." {
			causes = append(causes, fmt.Sprintf("%s[%s]: Invalid value: %q: a valid config key must consist of alphanumeric characters, '-', '_' or '.'", field, k, k))
			return true
		}
		return false
	}
	for k, v := range cm.Data {
		bad("data", k)
		size += len(v)
	}
	for k, v := range cm.BinaryData {
		bad("binaryData", k)
		if _, dup := cm.Data[k]; dup {
			causes = append(causes, fmt.Sprintf("data[%s]: Invalid value: %q: duplicate of key present in binaryData", k, k))
		}
		size += len(v)
	}
	if size > maxSize {
		causes = append(causes, fmt.Sprintf("[]: Too long: may not be more than %d bytes", maxSize))
	}
	if len(causes) == 0 {
		return true
	}
	sort.Strings(causes)
	writeStatus(w, http.StatusUnprocessableEntity, "Invalid", fmt.Sprintf("ConfigMap %q is invalid: %s", cm.Name, strings.Join(causes, ", ")), cm.Name)
	return false
}

// setServerFields sets uid, creationTimestamp (kept from old on update)
// and a new resourceVersion.
func (s *Server) setServerFields(cm, old *corev1.ConfigMap) {
	s.rv++
	cm.ResourceVersion = strconv.Itoa(s.rv)
	cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	if old != nil {
		cm.UID, cm.CreationTimestamp = old.UID, old.CreationTimestamp
		return
	}
	cm.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", s.rv))
	cm.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func writeNotFound(w http.ResponseWriter, name string) {
	writeStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("configmaps %q not found", name), name)
}

// writeStatus answers with a metav1.Status, as the API server does for
// every error; name, when set, goes into its details.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message, name string) {
	st := &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: message, Reason: reason, Code: int32(code),
	}
	if name != "" {
		st.Details = &metav1.StatusDetails{Name: name, Kind: "configmaps"}
	}
	writeObject(w, code, st)
}

func writeObject(w http.ResponseWriter, code int, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// Kubeconfig returns a kubeconfig whose current context points at url,
// trusting the PEM certificate caPEM (none for plain HTTP) and sending
// token (none when empty), in namespace "default".
func Kubeconfig(url string, caPEM []byte, token string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: kubetest\n  cluster:\n    server: " + url + "\n")
	if len(caPEM) > 0 {
		b.WriteString("    certificate-authority-data: " + base64.StdEncoding.EncodeToString(caPEM) + "\n")
	}
	b.WriteString("users:\n- name: kubetest\n  user:")
	if token != "" {
		b.WriteString("\n    token: " + token + "\n")
	} else {
		b.WriteString(" {}\n")
	}
	b.WriteString("contexts:\n- name: kubetest\n  context:\n    cluster: kubetest\n    user: kubetest\n    namespace: default\ncurrent-context: kubetest\n")
	return []byte(b.String())
}

// CertPEM returns the PEM encoding of a TLS test server's certificate.
func CertPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// runtimeSerializer returns the API machinery's decoder for a media type.
func runtimeSerializer(mediaType string) (interface {
	Decode([]byte, *schema.GroupVersionKind, runtime.Object) (runtime.Object, *schema.GroupVersionKind, error)
}, bool) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, false
	}
	return scheme.Codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion), true
}
