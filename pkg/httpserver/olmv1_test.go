package httpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/olmv1"
)

// TestOLMv1 asks /api/v1/olmv1/ of testdata/olmv1/catalog (its README
// explains each package) served alone.
func TestOLMv1(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, "../../testdata/olmv1/catalog"), "olmv1")
	for _, tc := range []struct {
		query    string
		code     int
		bundle   string
		status   olmv1.Status
		path     []string
		contains string // in the error
	}{
		{"package=rollback", 200, "rollback.v2.0.0", olmv1.Installable, nil, ""},
		{"package=skipper&channel=stable", 200, "skipper.v1.2.0", olmv1.Installable, nil, ""},
		{"package=skipper&channel=stable&channel=fast&version=<2.0.0", 200, "skipper.v1.2.0", olmv1.Installable, nil, ""},
		{"package=skipper&channel=stable&from=1.0.0", 200, "skipper.v1.1.0", olmv1.Installable, []string{"skipper.v1.1.0", "skipper.v1.2.0"}, ""},
		{"package=skipper&from=1.2.0&policy=SelfCertified&version=1.0.0", 200, "skipper.v1.0.0", olmv1.Installable, []string{"skipper.v1.0.0"}, ""},
		{"package=own-namespace", 200, "own-namespace.v1.0.0", olmv1.NotInstallable, nil, ""},
		{"package=own-namespace&watchNamespace=team-a", 200, "own-namespace.v1.0.0", olmv1.Installable, nil, ""},
		{"package=needs-certs", 200, "needs-certs.v1.0.0", olmv1.NotInstallable, nil, "has a dependency declared via property"},
		{"package=skipper&version=>=9.0.0", 200, "", "", nil, `no bundles found for package \"skipper\" matching version`},
		{"package=skipper&version=foobar", 400, "", "", nil, "improper constraint"},
		{"package=skipper&policy=Never", 400, "", "", nil, "invalid upgrade constraint policy"},
		{"package=skipper&from=nothing", 400, "", "", nil, "carries no version"},
		{"package=nope", 404, "", "", nil, `package \"nope\" not found`},
		{"channel=stable", 400, "", "", nil, "the package parameter is required"},
		{"package=skipper&bundle=x", 400, "", "", nil, "unknown parameter"},
		{"package=" + strings.Repeat("x", 300), 400, "", "", nil, "longer than"},
	} {
		resp, body := ts.do(t, "GET", "/api/v1/olmv1/resolve?"+tc.query)
		if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %s, want %d", tc.query, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.code)
			continue
		}
		if tc.contains != "" {
			if !strings.Contains(string(body), tc.contains) {
				t.Errorf("%s: %s lacks %q", tc.query, body, tc.contains)
			}
			if tc.code != 200 {
				continue
			}
		}
		var a struct {
			olmv1.Answer
			Path []olmv1.Step `json:"path"`
		}
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%s: %v: %s", tc.query, err, body)
		}
		if tc.bundle == "" {
			if a.Resolved {
				t.Errorf("%s: resolved to %+v", tc.query, a.Bundle)
			}
			continue
		}
		var path []string
		for _, s := range a.Path {
			path = append(path, s.To)
		}
		if a.Bundle == nil || a.Bundle.Name != tc.bundle || a.Installable == nil || a.Installable.Status != tc.status ||
			strings.Join(path, ",") != strings.Join(tc.path, ",") || a.Bundle.Catalog != "olmv1" {
			t.Errorf("%s: got %+v %+v path %v, want %s %s %v", tc.query, a.Bundle, a.Installable, path, tc.bundle, tc.status, tc.path)
		}
	}

	resp, body := ts.do(t, "GET", "/api/v1/olmv1/all")
	var rep olmv1.Report
	if err := json.Unmarshal(body, &rep); err != nil || resp.StatusCode != 200 {
		t.Fatalf("all: %d %v: %s", resp.StatusCode, err, body)
	}
	c := rep.Counts()
	if len(rep.Rows) != 11 || c[string(olmv1.Installable)] != 7 || c[string(olmv1.NotInstallable)] != 4 || rep.Catalog != "olmv1" {
		t.Errorf("all: %d rows, %v", len(rep.Rows), c)
	}
	if resp, _ := ts.do(t, "GET", "/api/v1/olmv1/all?x=1"); resp.StatusCode != 400 {
		t.Errorf("all with a parameter: %d", resp.StatusCode)
	}
}
