package httpserver_test

import (
	"encoding/json"
	"testing"
)

// TestDidYouMean: a package or channel near one the catalog has gets the
// suggestion the CLI gives (pkg/suggest; in the words of `opm alpha query
// updates`, the install route's CLI naming its catalogs instead), from
// /api/v1/updates (as `opm alpha query updates`), /api/v1/install and
// every other route that names a package, channel or bundle.
func TestDidYouMean(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, "../../testdata/install/community"), "community")
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/updates?package=ectd&from=0.9.0", `package "ectd" not found in the catalog; did you mean etcd?`},
		{"/api/v1/updates?package=etcd&channel=alpah&from=0.9.0", `channel "alpah" not found in package "etcd" (its channels: alpha, stable); did you mean alpha?`},
		{"/api/v1/install?package=ectd", `package "ectd" not found in the catalog; did you mean etcd?`},
		{"/api/v1/install?package=etcd&channel=alpah", `channel "alpah" not found in package "etcd" (its channels: alpha, stable); did you mean alpha?`},
		// The other routes that name a package, channel or bundle.
		{"/api/v1/packages/ectd", `package "ectd" not found in the catalog; did you mean etcd?`},
		{"/api/v1/packages/ectd/icon", `package "ectd" not found in the catalog; did you mean etcd?`},
		{"/api/v1/packages/ectd/graph.svg", `package "ectd" not found in the catalog; did you mean etcd?`},
		{"/api/v1/packages/etcd/graph.svg?channel=alpah", `channel "alpah" not found in package "etcd" (its channels: alpha, stable); did you mean alpha?`},
		{"/api/v1/packages/etcd/bundles/etcdoprator.v0.9.2", `bundle "etcdoprator.v0.9.2" not found in package "etcd"; did you mean etcdoperator.v0.9.2?`},
		{"/api/v1/packages/etcd/bundles/etcdoperator.v0.9.1", `bundle "etcdoperator.v0.9.1" not found in package "etcd"`}, // another version
		{"/api/v1/olmv1/resolve?package=ectd", `package "ectd" not found in the catalog; did you mean etcd?`},
		// Nothing near: no suggestion.
		{"/api/v1/updates?package=zzzzzzzz&from=0.9.0", `package "zzzzzzzz" not found in the catalog`},
		{"/api/v1/install?package=etcd&channel=zzzzzzzz", `channel "zzzzzzzz" not found in package "etcd" (its channels: alpha, stable)`},
	} {
		resp, body := ts.do(t, "GET", tc.path)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 404 || e.Error != tc.want {
			t.Errorf("%s: %d %s, want 404 %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
}
