package httpserver_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// TestInstall asks /api/v1/install of testdata/install/community (its
// README explains each package) served alone.
func TestInstall(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, "../../testdata/install/community"), "community")
	for _, tc := range []struct {
		query    string
		code     int
		status   install.Status
		installs []string
		contains string // in the reasons or the error
	}{
		{"package=etcd", 200, install.Installable, []string{"etcdoperator.v0.9.4"}, ""},
		{"package=etcd&channel=alpha", 200, install.Installable, []string{"etcdoperator.v0.10.0"}, ""},
		{"package=etcd&channel=stable&bundle=etcdoperator.v0.9.0", 200, install.Installable, []string{"etcdoperator.v0.9.0"}, ""},
		{"package=etcd-backup", 200, install.Installable, []string{"etcd-backup.v1.0.0", "etcdoperator.v0.9.4"}, ""},
		{"package=pinned", 200, install.Installable, []string{"pinned.v1.0.0", "etcdoperator.v0.9.2"}, ""},
		{"package=broken", 200, install.Unsatisfiable, nil, "broken.v1.1.0 requires GVK example.com/v1/Missing; no bundle in the catalogs provides it"},
		// Without the other catalogs, logging's dependency has no provider.
		{"package=logging", 200, install.Unsatisfiable, nil, "logging.v5.0.0 requires package elasticsearch in range >=7.0.0; no bundle in the catalogs meets it"},
		{"package=etcd&bundle=nope", 200, install.Unsatisfiable, nil, `package etcd of catalog community has no bundle "nope"`},
		{"package=nope", 404, "", nil, `package \"nope\" not found in the catalog`},
		{"package=etcd&channel=beta", 404, "", nil, `channel \"beta\" not found in package \"etcd\" (its channels: alpha, stable)`},
		{"channel=stable", 400, "", nil, "the package parameter is required"},
		{"package=etcd&from=x", 400, "", nil, "from"},
		{"package=" + strings.Repeat("x", 300), 400, "", nil, "longer than"},
	} {
		resp, body := ts.do(t, "GET", "/api/v1/install?"+tc.query)
		if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %s, want %d", tc.query, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.code)
			continue
		}
		if tc.code != 200 {
			if !strings.Contains(string(body), tc.contains) {
				t.Errorf("%s: %s lacks %q", tc.query, body, tc.contains)
			}
			continue
		}
		var a install.Answer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%s: %v: %s", tc.query, err, body)
		}
		var got []string
		for _, in := range a.Installs {
			got = append(got, in.Bundle)
		}
		if a.Status != tc.status || !slices.Equal(got, tc.installs) || a.Subscription.Catalog != "community" {
			t.Errorf("%s: %s %v (%+v), want %s %v", tc.query, a.Status, got, a.Subscription, tc.status, tc.installs)
		}
		if tc.contains != "" && !slices.ContainsFunc(a.Reasons, func(r string) bool { return strings.Contains(r, tc.contains) }) {
			t.Errorf("%s: reasons %q lack %q", tc.query, a.Reasons, tc.contains)
		}
	}
}

// TestInstallConcurrent: requests at once share one resolver, made once.
func TestInstallConcurrent(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, "../../testdata/install/community"), "community")
	var wg sync.WaitGroup
	bodies := make([]string, 8)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := []string{"package=etcd-backup", "package=compound", "package=two-etcds", "package=etcd&channel=alpha"}[i%4]
			resp, body := ts.do(t, "GET", "/api/v1/install?"+q)
			if resp.StatusCode != 200 {
				t.Errorf("%s: %d %s", q, resp.StatusCode, body)
			}
			bodies[i] = string(body)
		}()
	}
	wg.Wait()
	for i := 4; i < len(bodies); i++ {
		if bodies[i] != bodies[i-4] {
			t.Errorf("the same question answered twice differently:\n%s\n%s", bodies[i], bodies[i-4])
		}
	}
}

// TestInstallUndecided: a question past the route's budget is 503 with
// Retry-After and the undecided answer, which names what made it hard.
// The budget is a nanosecond: spent on any machine.
func TestInstallUndecided(t *testing.T) {
	dir := t.TempDir()
	s, _ := shapecat.LookupAny("pigeonhole")
	if err := s.WriteDir(dir, 3); err != nil {
		t.Fatal(err)
	}
	ts := newTestServerOpts(t, snapshotDir(t, dir), httpserver.Options{CatalogName: "hostile", Budget: time.Nanosecond})
	resp, body := ts.do(t, "GET", "/api/v1/install?package=shape")
	var a install.Answer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "30" || a.Status != install.Undecided ||
		!strings.Contains(a.Error, "undecided within 1e-09 s: the constraints are too hard to decide") {
		t.Errorf("%d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}
