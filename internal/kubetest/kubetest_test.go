package kubetest

import (
	"encoding/json"
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
