package httpserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestETagMatch: If-None-Match as RFC 9110 writes it: several tags on a
// line or on several lines, weak tags, "*"; a header that does not name
// the answer's tag (a tag holding a comma, unquoted, lowercase w/) gets
// the answer.
func TestETagMatch(t *testing.T) {
	ts := pageServer(t)
	for _, path := range []string{"/api/v1/packages", "/api/v1/packages?limit=all&q=etcd", "/api/v1/packages/markdown-test", "/catalogs/page/api/v1/packages/etcd"} {
		resp, _ := get(t, ts.URL+path)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || len(etag) < 3 || etag[0] != '"' {
			t.Fatalf("%s: %d, ETag %q", path, resp.StatusCode, etag)
		}
		bare := strings.Trim(etag, `"`)
		for _, c := range []struct {
			lines []string
			code  int
		}{
			{[]string{etag}, http.StatusNotModified},
			{[]string{"W/" + etag}, http.StatusNotModified},
			{[]string{`"a", W/"b", ` + etag}, http.StatusNotModified},
			{[]string{`"a",` + etag + `,"c"`}, http.StatusNotModified},
			{[]string{`"a"`, etag}, http.StatusNotModified},
			{[]string{" \t" + etag + " "}, http.StatusNotModified},
			{[]string{"*"}, http.StatusNotModified},
			{[]string{`"a", *`}, http.StatusNotModified},
			{[]string{`"stale"`}, http.StatusOK},
			{[]string{""}, http.StatusOK},
			{[]string{bare}, http.StatusOK},
			{[]string{`"x,` + etag}, http.StatusOK}, // the tag "x," then text
			{[]string{"w/" + etag}, http.StatusOK},
			{[]string{"W/ " + etag}, http.StatusOK},
			{[]string{`"` + bare}, http.StatusOK},
			{[]string{`"a" junk ` + etag}, http.StatusOK},
		} {
			for _, method := range []string{"GET", "HEAD"} {
				req, err := http.NewRequest(method, ts.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range c.lines {
					req.Header.Add("If-None-Match", l)
				}
				r, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				r.Body.Close()
				if r.StatusCode != c.code {
					t.Errorf("%s %s with If-None-Match %q: %d, want %d", method, path, c.lines, r.StatusCode, c.code)
				}
				if r.StatusCode == http.StatusNotModified && r.Header.Get("ETag") != etag {
					t.Errorf("%s %s: a 304 with ETag %q, want %q", method, path, r.Header.Get("ETag"), etag)
				}
			}
		}
	}
	// An error is not a 304, whatever the header.
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/packages/nope", nil)
	req.Header.Set("If-None-Match", "*")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("a missing package with If-None-Match *: %v %v", r.StatusCode, err)
	} else {
		r.Body.Close()
	}
}
