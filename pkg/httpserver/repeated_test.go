package httpserver_test

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestRepeatedParams: a parameter given twice on our JSON routes is
// refused, naming it, rather than read as its first value (another
// question than the one asked); the filters of /api/v1/packages and the
// channels of /api/v1/olmv1/resolve may repeat. catalogd's routes answer
// as catalogd does (operator-controller v1.11.0, whose handler reads
// each of schema, package and name with Query().Get, and whose test
// "request with duplicate parameters" answers 200): metas takes the first
// value, and /api/v1/all reads no parameter.
func TestRepeatedParams(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, "../../testdata/install/community"), "community")
	for path, name := range map[string]string{
		"/api/v1/updates?package=etcd&from=0.9.0&from=0.9.2":                     "from",
		"/api/v1/updates?package=etcd&package=etcd&from=0.9.0":                   "package",
		"/api/v1/updates?package=etcd&channel=alpha&channel=stable&from=0.9.0":   "channel",
		"/api/v1/install?package=etcd&channel=alpha&channel=stable":              "channel",
		"/api/v1/install?package=etcd&bundle=a&bundle=b":                         "bundle",
		"/api/v1/packages?limit=1&limit=2":                                       "limit",
		"/api/v1/packages?q=etcd&q=pinned":                                       "q",
		"/api/v1/packages/etcd/graph.svg?channel=alpha&channel=stable":           "channel",
		"/api/v1/olmv1/resolve?package=etcd&package=pinned":                      "package",
		"/api/v1/olmv1/resolve?package=etcd&from=etcdoperator.v0.9.0&from=0.9.2": "from",
	} {
		resp, body := ts.do(t, "GET", path)
		var e struct{ Error string }
		want := `parameter "` + name + `" given 2 times: give it once`
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 400 || e.Error != want {
			t.Errorf("%s: %d %s, want 400 %q", path, resp.StatusCode, body, want)
		}
	}
	for _, path := range []string{
		"/api/v1/packages?category=Database&category=Storage",
		"/api/v1/olmv1/resolve?package=etcd&channel=alpha&channel=stable",
	} {
		if resp, body := ts.do(t, "GET", path); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s, want 200", path, resp.StatusCode, body)
		}
	}
	for repeated, first := range map[string]string{
		"/catalogs/community/api/v1/metas?schema=olm.package&schema=olm.bundle": "/catalogs/community/api/v1/metas?schema=olm.package",
		"/catalogs/community/api/v1/metas?schema=olm.bundle&&schema=olm.bundle": "/catalogs/community/api/v1/metas?schema=olm.bundle",
		"/catalogs/community/api/v1/metas?package=etcd&package=pinned":          "/catalogs/community/api/v1/metas?package=etcd",
		"/catalogs/community/api/v1/metas?name=stable&name=alpha":               "/catalogs/community/api/v1/metas?name=stable",
		"/catalogs/community/api/v1/all?schema=a&schema=b":                      "/catalogs/community/api/v1/all",
	} {
		resp, body := ts.do(t, "GET", repeated)
		_, want := ts.do(t, "GET", first)
		if resp.StatusCode != 200 || len(body) == 0 || !bytes.Equal(body, want) {
			t.Errorf("%s: %d, %d bytes, want 200 and the %d bytes of %s", repeated, resp.StatusCode, len(body), len(want), first)
		}
	}
}

// TestParamProblemsInOrder: a query string with several problems is
// refused naming the first of them in the request, every time: the same
// request gets the same answer (the parameters were checked in the order
// of a Go map, which changes from one request to the next).
func TestParamProblemsInOrder(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, "../../testdata/install/community"), "community")
	for path, want := range map[string]string{
		"/api/v1/packages?zz=1&yy=2":                        `unknown parameter "zz"`,
		"/api/v1/packages?yy=2&zz=1":                        `unknown parameter "yy"`,
		"/api/v1/packages?&=1&limit=1":                      `unknown parameter ""`,
		"/api/v1/packages?limit=1&limit=2&yy=2":             `parameter "limit" given 2 times: give it once`,
		"/api/v1/packages?yy=2&limit=1&limit=2":             `unknown parameter "yy"`,
		"/api/v1/updates?package=etcd&from=a&xx=1&from=b":   `parameter "from" given 2 times: give it once`,
		"/api/v1/updates?package=etcd&x%79=1&from=a&from=b": `unknown parameter "xy"`,
	} {
		for range 20 {
			resp, body := ts.do(t, "GET", path)
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 400 || !bytes.HasPrefix([]byte(e.Error), []byte(want)) {
				t.Errorf("%s: %d %s, want 400 %q", path, resp.StatusCode, body, want)
				break
			}
		}
	}
}
