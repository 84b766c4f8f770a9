package cli

import (
	"strings"
	"testing"
)

// TestHubFlags: every wrong command line of opm alpha hub exits 2 with
// a message naming what is wrong, before anything is served.
func TestHubFlags(t *testing.T) {
	const community = "community=../../../../testdata/install/community"
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--http-addr", "127.0.0.1:0"}, "give at least one catalog: --catalog NAME=REF"},
		{[]string{"--catalog", community}, "--http-addr is required"},
		{[]string{"--catalog", "Community=../../../../testdata/install/community", "--http-addr", "127.0.0.1:0"}, `invalid catalog name "Community"`},
		{[]string{"--catalog", community, "--catalog", community, "--http-addr", "127.0.0.1:0"}, `two catalogs are named "community"`},
		{[]string{"--catalog", "team-a/" + community, "--catalog", "team-b/" + community, "--http-addr", "127.0.0.1:0"},
			`--catalog team-b/community: two catalogs are named "community": give each a name of its own in the hub with name=HUBNAME (e.g. --catalog team-b/community=REF,name=community-team-b)`},
		{[]string{"--catalog", "team-a/" + community + ",name=c", "--catalog", "team-b/" + community + ",name=c", "--http-addr", "127.0.0.1:0"},
			`two catalogs are named "c" in the hub`},
		{[]string{"--catalog", community + ",name=Not_A_Name", "--http-addr", "127.0.0.1:0"}, `name=: invalid catalog name "Not_A_Name"`},
		{[]string{"--catalog", community + ",nam=c", "--http-addr", "127.0.0.1:0"}, "did you mean name?"},
		{[]string{"--catalog", community + ",pollIntervalMinutes=5", "--http-addr", "127.0.0.1:0"}, "pollIntervalMinutes polls an image"},
		{[]string{"--catalog", community + ",priorty=1", "--http-addr", "127.0.0.1:0"}, "did you mean priority?"},
		{[]string{"--catalog", community, "--state", "../../../../testdata/cluster/nope.yaml", "--http-addr", "127.0.0.1:0"}, "nope.yaml"},
		{[]string{"--catalog", community, "--state", "../../../../testdata/cluster/states/several-subscriptions.yaml", "--kubeconfig", "kc", "--http-addr", "127.0.0.1:0"}, "--state and --kubeconfig (--context) do not go together"},
		{[]string{"--catalog", community, "--state", "../../../../testdata/cluster/states/several-subscriptions.yaml", "--state-interval", "1m", "--http-addr", "127.0.0.1:0"}, "--state-interval reads a live cluster again: it needs --kubeconfig"},
		{[]string{"--catalog", community, "--kubeconfig", "kc", "--state-interval", "0s", "--http-addr", "127.0.0.1:0"}, "--state-interval must be a positive duration"},
		{[]string{"--catalog", community, "--kubeconfig", "../../../../testdata/cluster/nope-kubeconfig", "--http-addr", "127.0.0.1:0"}, "--kubeconfig ../../../../testdata/cluster/nope-kubeconfig: stat "},
		{[]string{"--catalog", community, "--http-addr", "127.0.0.1:0", "--http-tls-cert", "x.pem"}, "--http-tls-cert and --http-tls-key must be given together"},
		{[]string{"--catalog", community, "--http-addr", "256.0.0.1:99999"}, "failed to listen on --http-addr"},
	} {
		code, _, stderr := run(t, append([]string{"alpha", "hub"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, %q; want 2 with %q", tc.args, code, stderr, tc.err)
		}
	}
}

// TestHubHelp: --catalog's own help says name=, the catalog's name in
// the hub apart from its CatalogSource's.
func TestHubHelp(t *testing.T) {
	code, out, _ := run(t, "alpha", "hub", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var flag string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "--catalog stringArray") {
			flag = line
		}
	}
	if !strings.Contains(flag, "[,name=HUBNAME]") || !strings.Contains(flag, "HUBNAME its name in the hub") {
		t.Errorf("--catalog's help: %q", flag)
	}
	if !strings.Contains(out, "--catalog team-a/my-catalog=REF1,name=my-catalog-a") {
		t.Errorf("the help has no example of name=:\n%s", out)
	}
}
