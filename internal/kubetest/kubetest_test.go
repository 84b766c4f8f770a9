package kubetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServer checks the answers a client relies on, in JSON: create, get,
// update, and the API server's errors.
func TestServer(t *testing.T) {
	t.Parallel()
	s := New()
	s.Token = "tok"
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	const coll = "/api/v1/namespaces/ns/configmaps"
	do := func(method, path, ctype, body, token string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %q", method, path, b)
		}
		return resp.StatusCode, m
	}
	status := func(m map[string]any) string {
		return m["reason"].(string) + ": " + m["message"].(string)
	}
	const js = "application/json"
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`

	if code, m := do("GET", coll+"/a", "", "", "wrong"); code != 401 || m["reason"] != "Unauthorized" {
		t.Errorf("wrong token: %d %v", code, m)
	}
	if code, m := do("GET", coll+"/a", "", "", "tok"); code != 404 || status(m) != `NotFound: configmaps "a" not found` {
		t.Errorf("get missing: %d %v", code, m)
	}
	if code, m := do("PUT", coll+"/a", js, cm, "tok"); code != 404 {
		t.Errorf("update missing: %d %v", code, m)
	}
	code, created := do("POST", coll, js, cm, "tok")
	meta, _ := created["metadata"].(map[string]any)
	if code != 201 || meta["namespace"] != "ns" || meta["resourceVersion"] == nil || meta["uid"] == nil {
		t.Fatalf("create: %d %v", code, created)
	}
	if code, m := do("POST", coll, js, cm, "tok"); code != 409 || status(m) != `AlreadyExists: configmaps "a" already exists` {
		t.Errorf("create again: %d %v", code, m)
	}
	stale := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"0"},"data":{"k":"w"}}`
	if code, m := do("PUT", coll+"/a", js, stale, "tok"); code != 409 || m["reason"] != "Conflict" {
		t.Errorf("stale update: %d %v", code, m)
	}
	fresh := strings.Replace(stale, `"0"`, `"`+meta["resourceVersion"].(string)+`"`, 1)
	code, updated := do("PUT", coll+"/a", js, fresh, "tok")
	if um, _ := updated["metadata"].(map[string]any); code != 200 || um["uid"] != meta["uid"] || um["resourceVersion"] == meta["resourceVersion"] {
		t.Errorf("update: %d %v", code, updated)
	}
	if got := s.Get("ns", "a"); got == nil || got.Data["k"] != "w" {
		t.Errorf("stored %v after the update", got)
	}
	if code, m := do("PUT", coll+"/a", "text/plain", fresh, "tok"); code != 415 {
		t.Errorf("text body: %d %v", code, m)
	}
	bad := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"a b":"v"},"binaryData":{"big":"` + strings.Repeat("A", 1<<21) + `"}}`
	if code, m := do("POST", coll, js, bad, "tok"); code != 422 || !strings.Contains(m["message"].(string), "data[a b]: Invalid value") || !strings.Contains(m["message"].(string), "Too long") {
		t.Errorf("invalid: %d %v", code, m)
	}
	if n := len(s.Requests()); n != 9 {
		t.Errorf("%d requests recorded, want 9", n)
	}
	if got := string(s.Normalized("ns", "a")); strings.Contains(got, "uid") || !strings.Contains(got, `"k": "w"`) {
		t.Errorf("normalized: %s", got)
	}
}

// TestLists checks the LIST answers a client relies on: pages and their
// continue tokens, items of built-in kinds without apiVersion and kind,
// the errors.
func TestLists(t *testing.T) {
	t.Parallel()
	l := NewLists()
	l.PageSize = 2
	l.Token = "tok"
	if err := l.AddYAML([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n" +
		"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n---\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: s, namespace: ns1}\n")); err != nil {
		t.Fatal(err)
	}
	l.Forbid("operators.coreos.com/v1alpha1", "subscriptions")
	if err := l.Add([]byte(`{"kind":"X"}`)); err == nil {
		t.Error("an object without apiVersion added")
	}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	get := func(path, token string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}
	var names []string
	pages := 0
	for cont := ""; ; pages++ {
		code, m := get("/api/v1/namespaces?limit=5&continue="+cont, "tok")
		if code != 200 || m["kind"] != "NamespaceList" || m["apiVersion"] != "v1" {
			t.Fatalf("%d %v", code, m)
		}
		for _, it := range m["items"].([]any) {
			o := it.(map[string]any)
			if o["kind"] != nil || o["apiVersion"] != nil {
				t.Errorf("item with its type: %v", o)
			}
			names = append(names, o["metadata"].(map[string]any)["name"].(string))
		}
		c, _ := m["metadata"].(map[string]any)["continue"].(string)
		if c == "" {
			break
		}
		cont = c
	}
	if strings.Join(names, ",") != "a,b,c" || pages != 1 {
		t.Errorf("listed %v in %d pages", names, pages+1)
	}
	if code, m := get("/api/v1/namespaces?continue=bogus", "tok"); code != 400 {
		t.Errorf("bad continue: %d %v", code, m)
	}
	if code, m := get("/apis/operators.coreos.com/v1alpha1/subscriptions", "tok"); code != 403 ||
		m["message"] != `subscriptions.operators.coreos.com is forbidden: User "alice" cannot list resource "subscriptions" in API group "operators.coreos.com" at the cluster scope` {
		t.Errorf("forbidden: %d %v", code, m)
	}
	if code, m := get("/apis/operators.coreos.com/v1alpha1/installplans", "tok"); code != 404 || m["reason"] != "NotFound" {
		t.Errorf("not served: %d %v", code, m)
	}
	if code, _ := get("/api/v1/namespaces", "wrong"); code != 401 {
		t.Errorf("wrong token: %d", code)
	}

	// An object changed in place (Put), one deleted, one put anew.
	if err := l.Put([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b","labels":{"x":"y"}}}`)); err != nil {
		t.Fatal(err)
	}
	if !l.Delete("v1", "Namespace", "", "a") || l.Delete("v1", "Namespace", "", "a") || l.Delete("v1", "Pod", "", "a") {
		t.Error("Delete does not say whether it deleted")
	}
	if err := l.Put([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"d"}}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for cont := ""; ; {
		_, m := get("/api/v1/namespaces?continue="+cont, "tok")
		for _, it := range m["items"].([]any) {
			md := it.(map[string]any)["metadata"].(map[string]any)
			got = append(got, fmt.Sprint(md["name"], " ", md["labels"]))
		}
		c, _ := m["metadata"].(map[string]any)["continue"].(string)
		if c == "" {
			break
		}
		cont = c
	}
	if strings.Join(got, ",") != "b map[x:y],c <nil>,d <nil>" {
		t.Errorf("after Put and Delete: %v", got)
	}
}
