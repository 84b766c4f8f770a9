package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/olmv1"
	"github.com/fastopm/fastopm/internal/imagetest"
)

// The catalog of testdata/olmv1 (its README explains every package).
func olmv1Catalog() string { return filepath.Join(goldenRoot, "olmv1", "catalog") }

// TestQueryInstallOLMv1 asks what a new ClusterExtension gets for each
// package of testdata/olmv1, and whether OLM v1 installs it.
func TestQueryInstallOLMv1(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		bundle string
		status olmv1.Status
		reason string
	}{
		{[]string{"-p", "plain"}, 0, "plain.v1.1.0", olmv1.Installable, ""},
		{[]string{"-p", "rollback"}, 0, "rollback.v2.0.0", olmv1.Installable, ""},
		{[]string{"-p", "deprecated-head"}, 0, "deprecated-head.v1.0.0", olmv1.Installable, ""},
		{[]string{"-p", "legacy-deprecated"}, 0, "legacy-deprecated.v1.1.0", olmv1.Installable, ""},
		{[]string{"-p", "skipper"}, 0, "skipper.v2.0.0", olmv1.Installable, ""},
		{[]string{"-p", "skipper", "-c", "stable"}, 0, "skipper.v1.2.0", olmv1.Installable, ""},
		{[]string{"-p", "skipper", "-c", "stable", "--version-range", "<1.2.0"}, 0, "skipper.v1.1.0", olmv1.Installable, ""},
		{[]string{"-p", "needs-certs"}, 1, "needs-certs.v1.0.0", olmv1.NotInstallable, `bundle "needs-certs.v1.0.0" has a dependency declared via property "olm.gvk.required" which is currently not supported`},
		{[]string{"-p", "own-namespace"}, 1, "own-namespace.v1.0.0", olmv1.NotInstallable, "unsupported bundle: bundle does not support AllNamespaces install mode"},
		{[]string{"-p", "own-namespace", "--watch-namespace", "team-a"}, 0, "own-namespace.v1.0.0", olmv1.Installable, ""},
		{[]string{"-p", "own-namespace", "--watch-namespace", "team-a", "--install-namespace", "team-a"}, 0, "own-namespace.v1.0.0", olmv1.Installable, ""},
		{[]string{"-p", "aggregated"}, 1, "aggregated.v1.0.0", olmv1.NotInstallable, "unsupported bundle: apiServiceDefintions are not supported"},
		{[]string{"-p", "webhooks"}, 1, "webhooks.v1.0.0", olmv1.NotInstallable, `webhook "vgadget.webhooks.example.com" contains forbidden rule: admission webhook rules cannot reference API group "*"`},
		{[]string{"-p", "plain", "--selector", olmv1.NameLabel + "=other"}, 1, "", "", `no bundles found for package "plain"`},
	} {
		args := append([]string{"alpha", "query", "install", olmv1Catalog(), "--olm", "v1", "-o", "json"}, tc.args...)
		code, out, errOut := run(t, args...)
		var a olmv1.Answer
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("%v: exit %d: %v\n%s%s", tc.args, code, err, out, errOut)
		}
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.args, code, tc.code)
		}
		if tc.bundle == "" {
			if a.Resolved || !strings.Contains(a.Error, tc.reason) {
				t.Errorf("%v: resolved %v, error %q, want %q", tc.args, a.Resolved, a.Error, tc.reason)
			}
			continue
		}
		if a.Bundle == nil || a.Bundle.Name != tc.bundle || a.Installable == nil || a.Installable.Status != tc.status {
			t.Errorf("%v: got %+v %+v, want %s %s", tc.args, a.Bundle, a.Installable, tc.bundle, tc.status)
			continue
		}
		if tc.reason != "" && !slices.Contains(a.Installable.Reasons, tc.reason) && a.Error != "validating bundle \""+tc.bundle+"\": "+tc.reason {
			t.Errorf("%v: reasons %q, error %q lack %q", tc.args, a.Installable.Reasons, a.Error, tc.reason)
		}
	}
}

// TestQueryOLMBoth: where OLM v0 and v1 differ on testdata/olmv1, as
// `--olm both` says it, for new installs (--all) and updates.
func TestQueryOLMBoth(t *testing.T) {
	code, out, errOut := run(t, "alpha", "query", "install", olmv1Catalog(), "--all", "--olm", "both", "-o", "json")
	var all struct {
		Rows []action.OLMInstallRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &all); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, errOut)
	}
	var differ []string
	for _, r := range all.Rows {
		if r.Differ {
			differ = append(differ, r.Package+"/"+r.V0Bundle+"/"+r.V1Bundle)
		}
	}
	want := []string{"aggregated/aggregated.v1.0.0/aggregated.v1.0.0", "deprecated-head/deprecated-head.v1.1.0/deprecated-head.v1.0.0",
		"legacy-deprecated/legacy-deprecated.v1.0.0/legacy-deprecated.v1.1.0", "needs-certs/needs-certs.v1.0.0/needs-certs.v1.0.0",
		"own-namespace/own-namespace.v1.0.0/own-namespace.v1.0.0", "rollback/rollback.v1.9.0/rollback.v2.0.0", "webhooks/webhooks.v1.0.0/webhooks.v1.0.0"}
	if !slices.Equal(differ, want) {
		t.Errorf("differ on\n  %s\nwant\n  %s", strings.Join(differ, "\n  "), strings.Join(want, "\n  "))
	}

	// The table gives every reason: webhooks' second under its first.
	code, out, errOut = run(t, "alpha", "query", "install", olmv1Catalog(), "--all", "--olm", "both")
	lines := strings.Split(out, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "webhooks ") })
	if code != 0 || i < 0 || i+1 >= len(lines) || !strings.Contains(lines[i], "conversion webhooks are only supported") ||
		strings.TrimSpace(lines[i+1]) != `webhook "vgadget.webhooks.example.com" contains forbidden rule: admission webhook rules cannot reference API group "*"` ||
		!strings.Contains(out, "\n11 channels: OLM v0 and v1 differ on 7\n") {
		t.Errorf("exit %d, table:\n%s%s", code, out, errOut)
	}

	for _, tc := range []struct {
		pkg, from   string
		v0, v1      string // the end of each path
		differences []string
	}{
		{"rollback", "1.0.0", "rollback.v1.9.0", "rollback.v2.0.0", []string{"in the end: OLM v0 reaches rollback.v1.9.0, OLM v1 rollback.v2.0.0"}},
		{"deprecated-head", "1.0.0", "deprecated-head.v1.1.0", "deprecated-head.v1.0.0", []string{
			"next: OLM v0 moves to deprecated-head.v1.1.0, OLM v1 to no update",
			"in the end: OLM v0 reaches deprecated-head.v1.1.0, OLM v1 deprecated-head.v1.0.0",
			"deprecated-head.v1.1.0 is deprecated by olm.deprecations: OLM v1 prefers any bundle that is not; OLM v0 only reports it"}},
		{"legacy-deprecated", "1.0.0", "legacy-deprecated.v1.0.0", "legacy-deprecated.v1.1.0", []string{
			"next: OLM v0 moves to no update, OLM v1 to legacy-deprecated.v1.1.0",
			"in the end: OLM v0 reaches legacy-deprecated.v1.0.0, OLM v1 legacy-deprecated.v1.1.0",
			"legacy-deprecated.v1.1.0 has the olm.deprecated property: OLM v0 never installs it; OLM v1 ignores the property"}},
		{"skipper", "skipper.v1.0.0", "skipper.v1.2.0", "skipper.v2.0.0", []string{
			"channels: OLM v0 follows the default channel stable; a ClusterExtension without channels takes bundles from every channel",
			"next: OLM v0 moves to skipper.v1.1.0, OLM v1 to skipper.v2.0.0",
			"in the end: OLM v0 reaches skipper.v1.2.0, OLM v1 skipper.v2.0.0"}},
		{"plain", "1.0.0", "plain.v1.1.0", "plain.v1.1.0", nil},
	} {
		code, out, errOut := run(t, "alpha", "query", "updates", olmv1Catalog(), "-p", tc.pkg, "--from", tc.from, "--olm", "both", "-o", "json")
		var b action.OLMUpdates
		if err := json.Unmarshal([]byte(out), &b); err != nil || code != 0 {
			t.Fatalf("%s: exit %d, %v: %s%s", tc.pkg, code, err, out, errOut)
		}
		v0end := b.V0.Installed.Name
		if n := len(b.V0.Path); n > 0 {
			v0end = b.V0.Path[n-1].To.Name
		}
		v1end := b.V1.Bundle.Name
		if n := len(b.V1Path); n > 0 {
			v1end = b.V1Path[n-1].To
		}
		if v0end != tc.v0 || v1end != tc.v1 || !slices.Equal(b.Differences, tc.differences) {
			t.Errorf("%s: v0 %s, v1 %s, differences\n  %s\nwant %s, %s,\n  %s", tc.pkg, v0end, v1end,
				strings.Join(b.Differences, "\n  "), tc.v0, tc.v1, strings.Join(tc.differences, "\n  "))
		}
	}

	// The text form names both answers and the differences.
	_, text, _ := run(t, "alpha", "query", "updates", olmv1Catalog(), "-p", "rollback", "--from", "1.0.0", "--olm", "both")
	for _, want := range []string{"== OLM v0", "== OLM v1", "resolves to: rollback.v2.0.0 (2.0.0)", "== Where OLM v0 and v1 differ"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Agreement, and questions neither OLM answers, which are no agreement.
	// install --olm both exits 0 only when both install; updates 1 when
	// neither answers.
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"updates", "-p", "plain", "--from", "1.0.0"}, "\n== OLM v0 and v1 agree\n", 0},
		{[]string{"install", "-p", "plain"}, "\n== OLM v0 and v1 agree\n", 0},
		{[]string{"install", "-p", "webhooks"}, "\n== Where OLM v0 and v1 differ\n", 1},
	} {
		args := append([]string{"alpha", "query", tc.args[0], olmv1Catalog()}, tc.args[1:]...)
		code, text, errOut := run(t, append(args, "--olm", "both")...)
		if !strings.Contains(text, tc.want) || code != tc.code {
			t.Errorf("%v: exit %d, want %d; the text lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, text, errOut)
		}
	}
}

// TestQueryUpdatesOLMv1 follows OLM v1 from installed bundles, with the
// policies, ranges and catalogs of a ClusterExtension.
func TestQueryUpdatesOLMv1(t *testing.T) {
	second := t.TempDir()
	if err := os.WriteFile(filepath.Join(second, "skipper.json"), []byte(`{"schema":"olm.package","name":"skipper","defaultChannel":"stable"}
{"schema":"olm.channel","package":"skipper","name":"stable","entries":[{"name":"skipper.v3.0.0","skipRange":"<3.0.0"}]}
{"schema":"olm.bundle","name":"skipper.v3.0.0","package":"skipper","image":"quay.io/example/skipper-bundle:v3.0.0","properties":[{"type":"olm.package","value":{"packageName":"skipper","version":"3.0.0"}}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		bundle string
		err    string
		path   []string
	}{
		{[]string{"-p", "skipper", "--from", "1.0.0"}, "skipper.v2.0.0", "", []string{"skipper.v2.0.0"}},
		{[]string{"-p", "skipper", "--from", "1.0.0", "-c", "stable"}, "skipper.v1.1.0", "", []string{"skipper.v1.1.0", "skipper.v1.2.0"}},
		{[]string{"-p", "skipper", "--from", "1.0.0", "-c", "stable", "-c", "fast"}, "skipper.v2.0.0", "", []string{"skipper.v2.0.0"}},
		{[]string{"-p", "skipper", "--from", "1.2.0", "-c", "stable"}, "skipper.v1.2.0", "", nil},
		{[]string{"-p", "skipper", "--from", "1.2.0", "--upgrade-constraint-policy", "SelfCertified", "--version-range", "<1.2.0"}, "skipper.v1.1.0", "", []string{"skipper.v1.1.0"}},
		{[]string{"-p", "skipper", "--from", "1.0.0", "--version-range", ">=3.0.0"}, "", `error upgrading from currently installed version "1.0.0": no bundles found for package "skipper" matching version ">=3.0.0"`, nil},
		// A second catalog of the same priority with a successor: a tie.
		{[]string{"-p", "skipper", "--from", "1.0.0", "--catalog", "other=" + second}, "", `error upgrading from currently installed version "1.0.0": found bundles for package "skipper" in multiple catalogs with the same priority [catalog other]`, nil},
		{[]string{"-p", "skipper", "--from", "1.0.0", "--catalog", "other=" + second + ",priority=1"}, "skipper.v3.0.0", "", []string{"skipper.v3.0.0"}},
		{[]string{"-p", "skipper", "--from", "1.0.0", "--catalog", "other=" + second, "--selector", olmv1.NameLabel + " in (other)"}, "skipper.v3.0.0", "", []string{"skipper.v3.0.0"}},
		// A bundle the catalog does not hold: its version from its name.
		{[]string{"-p", "skipper", "--from", "skipper.v0.5.0"}, "skipper.v2.0.0", "", []string{"skipper.v2.0.0"}},
	} {
		args := append([]string{"alpha", "query", "updates", olmv1Catalog(), "--olm", "v1", "-o", "json"}, tc.args...)
		code, out, errOut := run(t, args...)
		var a action.UpdatesV1
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("%v: exit %d, %v: %s%s", tc.args, code, err, out, errOut)
		}
		if tc.err != "" {
			// Nothing resolves: exit 1, with operator-controller's words
			// in the answer and as the error.
			if a.Resolved || a.Error != tc.err || code != 1 || errOut != "Error: "+tc.err+"\n" {
				t.Errorf("%v: exit %d, resolved %v, error %q, stderr %q; want exit 1 and %q", tc.args, code, a.Resolved, a.Error, errOut, tc.err)
			}
			continue
		}
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		var path []string
		for _, s := range a.Path {
			path = append(path, s.To)
		}
		if !a.Resolved || a.Bundle.Name != tc.bundle || !slices.Equal(path, tc.path) {
			t.Errorf("%v: got %+v (%s), path %v; want %s, %v", tc.args, a.Bundle, a.Error, path, tc.bundle, tc.path)
		}
	}
}

// TestQueryMissingNames: a package or channel no catalog holds is a
// wrong question for every OLM (issue 27: it exited 1, "the answer is
// no", which a script cannot tell from an answer): exit 2, the error on
// standard error naming what is missing (with the nearest name), nothing
// on standard output. A package only an unselected catalog holds is an
// answer (exit 1).
func TestQueryMissingNames(t *testing.T) {
	cat := olmv1Catalog()
	for _, tc := range []struct {
		args   []string
		errOut string
	}{
		{[]string{"updates", "-p", "plain", "-c", "nope", "--from", "1.0.0", "--olm", "v0"}, "Error: channel \"nope\" not found in package \"plain\" (its channels: stable)\n"},
		{[]string{"updates", "-p", "plain", "-c", "nope", "--from", "1.0.0", "--olm", "v1"}, "Error: package plain has no channel \"nope\" in any catalog (its channels: stable)\n"},
		{[]string{"updates", "-p", "plain", "-c", "nope", "--from", "1.0.0", "--olm", "both"}, "Error: package plain has no channel \"nope\" in any catalog (its channels: stable)\n"},
		{[]string{"updates", "-p", "plian", "--from", "1.0.0", "--olm", "v1"}, "Error: package \"plian\" is in none of the catalogs (catalog); did you mean plain?\n"},
		{[]string{"updates", "-p", "plian", "--from", "1.0.0", "--olm", "both"}, "Error: package \"plian\" is in none of the catalogs (catalog); did you mean plain?\n"},
		{[]string{"install", "-p", "plain", "-c", "nope", "--olm", "v0"}, "Error: package plain of catalog catalog has no channel \"nope\" (its channels: stable)\n"},
		{[]string{"install", "-p", "plain", "-c", "nope", "--olm", "v1"}, "Error: package plain has no channel \"nope\" in any catalog (its channels: stable)\n"},
		{[]string{"install", "-p", "plain", "-c", "nope", "--olm", "both"}, "Error: package plain has no channel \"nope\" in any catalog (its channels: stable)\n"},
		{[]string{"install", "-p", "plian", "--olm", "v1"}, "Error: package \"plian\" is in none of the catalogs (catalog); did you mean plain?\n"},
		{[]string{"install", "-p", "plian", "--olm", "both"}, "Error: package \"plian\" is in none of the catalogs (catalog); did you mean plain?\n"},
	} {
		for _, o := range []string{"text", "json"} {
			args := append([]string{"alpha", "query", tc.args[0], cat, "-o", o}, tc.args[1:]...)
			code, out, errOut := run(t, args...)
			if code != 2 || out != "" || errOut != tc.errOut {
				t.Errorf("%v -o %s: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", tc.args, o, code, out, errOut, tc.errOut)
			}
		}
	}
	code, out, _ := run(t, "alpha", "query", "install", cat, "-p", "plain", "--olm", "v1", "--selector", olmv1.NameLabel+"=other")
	if code != 1 || !strings.Contains(out, `no bundles found for package "plain"`) {
		t.Errorf("unselected: exit %d\n%s", code, out)
	}
}

func TestQueryOLMv1Errors(t *testing.T) {
	cat := olmv1Catalog()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"updates", cat, "-p", "plain", "--from", "1.0.0", "--olm", "v2"}, `invalid --olm value "v2"`},
		{[]string{"updates", cat, "-p", "plain", "--from", "1.0.0", "--version-range", "<2"}, "--version-range is an OLM v1 question"},
		{[]string{"updates", cat, "-p", "plain", "--from", "1.0.0", "-c", "a", "-c", "b"}, "give several --channel only with --olm v1"},
		{[]string{"updates", cat, "-p", "plain", "--olm", "v1", "--all"}, "--all is an OLM v0 question"},
		{[]string{"updates", cat, "-p", "plain", "--olm", "both"}, "--olm both compares updates: give --from"},
		// Without --from there is no installed bundle for the version to be
		// that of: the flag would be ignored (a new ClusterExtension's answer).
		{[]string{"updates", cat, "-p", "plain", "--olm", "v1", "--installed-version", "1.0.0"}, "--installed-version is the installed bundle's version: give --from"},
		// Refused before any catalog is read, with --olm v1 as with both.
		{[]string{"updates", cat, "-p", "plain", "--from", "gone", "--olm", "v1", "--installed-version", "nonsense"}, `--installed-version "nonsense" is not a version: Invalid character(s)`},
		{[]string{"updates", cat, "-p", "plain", "--from", "gone", "--olm", "both", "--installed-version", "1.x"}, `--installed-version "1.x" is not a version`},
		{[]string{"updates", cat, "-p", "plain", "--from", "1.0.0", "--olm", "v1", "--version-range", "foobar"}, `desired version range "foobar" is invalid: improper constraint: "foobar"`},
		{[]string{"updates", cat, "-p", "plain", "--from", "1.0.0", "--olm", "v1", "--upgrade-constraint-policy", "Never"}, `invalid --upgrade-constraint-policy "Never"`},
		{[]string{"updates", cat, "-p", "plain", "--from", "nothing", "--olm", "v1"}, `bundle "nothing" is in none of the catalogs and its name carries no version`},
		{[]string{"install", cat, "-p", "plain", "--olm", "v1", "--version", "1.0.0"}, "OLM v1 takes --version-range"},
		{[]string{"install", cat, "-p", "plain", "--olm", "v1", "--selector", "a in b"}, "desired catalog selector is invalid"},
		// A ClusterCatalog's spec.priority is an int32 (OLM v0's
		// CatalogSource takes any int).
		{[]string{"install", "--catalog", "big=" + cat + ",priority=2147483648", "-p", "plain", "--olm", "v1"}, `catalog big: priority 2147483648 is out of a ClusterCatalog's range (-2147483648 to 2147483647)`},
		{[]string{"updates", cat, "--catalog", "low=" + cat + ",priority=-2147483649", "-p", "plain", "--from", "1.0.0", "--olm", "both"}, `catalog low: priority -2147483649 is out of a ClusterCatalog's range`},
	} {
		code, _, errOut := run(t, append([]string{"alpha", "query"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestQueryInstallPullBundles: a catalog that carries only
// olm.csv.metadata is unknown until --pull-bundles reads the bundle
// image, here from an in-process registry (its CSV, CRD and the
// dependencies of its metadata, which the catalog's bundle does not
// declare); an image that cannot be pulled leaves it unknown.
func TestQueryInstallPullBundles(t *testing.T) {
	reg := imagetest.Registry(t)
	imagetest.Push(t, reg+"/widget-bundle:v1", imagetest.BundleImage(t, filepath.Join(goldenRoot, "install", "bundle")))
	dir := t.TempDir()
	catalog := `{"schema":"olm.package","name":"widget-operator","defaultChannel":"stable"}
{"schema":"olm.channel","package":"widget-operator","name":"stable","entries":[{"name":"widget-operator.v1.0.0"}]}
{"schema":"olm.bundle","name":"widget-operator.v1.0.0","package":"widget-operator","image":"` + reg + `/widget-bundle:v1","properties":[{"type":"olm.package","value":{"packageName":"widget-operator","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}]}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pull    bool
		status  olmv1.Status
		checked string
	}{
		{false, olmv1.Unknown, "olm.csv.metadata only"},
		{true, olmv1.Installable, "bundle image"},
	} {
		if tc.pull {
			// A second bundle whose image is missing.
			missing := strings.ReplaceAll(strings.ReplaceAll(catalog, "widget-bundle:v1", "missing:v1"), "widget-operator", "gadget-operator")
			if err := os.WriteFile(filepath.Join(dir, "gadget.json"), []byte(missing), 0o644); err != nil {
				t.Fatal(err)
			}
			_, out, _ := run(t, "--use-http", "alpha", "query", "install", dir, "-p", "gadget-operator", "--olm", "v1", "-o", "json", "--pull-bundles")
			var a olmv1.Answer
			if err := json.Unmarshal([]byte(out), &a); err != nil || a.Installable == nil || a.Installable.Status != olmv1.Unknown ||
				!strings.Contains(strings.Join(a.Installable.Notes, "\n"), "could not be read") {
				t.Errorf("missing image: %v %+v", err, a.Installable)
			}
		}
		args := []string{"--use-http", "alpha", "query", "install", dir, "-p", "widget-operator", "--olm", "v1", "-o", "json"}
		if tc.pull {
			args = append(args, "--pull-bundles")
		}
		_, out, errOut := run(t, args...)
		var a olmv1.Answer
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("pull %v: %v: %s%s", tc.pull, err, out, errOut)
		}
		if a.Installable == nil || a.Installable.Status != tc.status || a.Installable.Checked != tc.checked {
			t.Fatalf("pull %v: got %+v, want %s (%s)", tc.pull, a.Installable, tc.status, tc.checked)
		}
	}
}

// TestQueryInstallAllUnknownWhyNot: with --all, a channel whose bundle's
// installability is unknown (the catalog carries only olm.csv.metadata)
// says why in WHY NOT and names --pull-bundles, in --olm v1's table and
// in --olm both's (issue 27: the column was empty).
func TestQueryInstallAllUnknownWhyNot(t *testing.T) {
	dir := t.TempDir()
	catalog := `{"schema":"olm.package","name":"widget-operator","defaultChannel":"stable"}
{"schema":"olm.channel","package":"widget-operator","name":"stable","entries":[{"name":"widget-operator.v1.0.0"}]}
{"schema":"olm.bundle","name":"widget-operator.v1.0.0","package":"widget-operator","image":"x.io/widget-bundle:v1","properties":[{"type":"olm.package","value":{"packageName":"widget-operator","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}]}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "the catalog carries no bundle objects (checked: olm.csv.metadata only); --pull-bundles pulls the bundle image to check it"
	for _, olm := range []string{"v1", "both"} {
		code, out, errOut := run(t, "alpha", "query", "install", dir, "--all", "--olm", olm)
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 2 || !strings.HasPrefix(lines[1], "widget-operator") || !strings.HasSuffix(lines[1], want) {
			t.Errorf("--olm %s: exit %d, %s\n%s", olm, code, errOut, out)
		}
	}
}

// TestQueryUpdatesInstalledVersion: --installed-version gives the version
// of a bundle no catalog holds; for a bundle the catalog holds (by name or
// by version), the catalog's version is the installed one, and a
// different --installed-version is refused, naming both, rather than
// followed one way for a name and ignored for a version.
func TestQueryUpdatesInstalledVersion(t *testing.T) {
	cat := olmv1Catalog()
	for _, tc := range []struct {
		args   []string
		code   int
		errOut string
	}{
		{[]string{"--from", "skipper.v1.0.0", "--installed-version", "1.1.0"}, 2,
			`Error: --installed-version 1.1.0 disagrees with the catalog: bundle "skipper.v1.0.0" has version 1.0.0 in catalog ` + "\"catalog\"; give --installed-version only for a bundle no catalog holds\n"},
		{[]string{"--from", "1.0.0", "--installed-version", "1.1.0"}, 2,
			`Error: --installed-version 1.1.0 disagrees with the catalog: bundle "skipper.v1.0.0" has version 1.0.0 in catalog ` + "\"catalog\"; give --installed-version only for a bundle no catalog holds\n"},
		{[]string{"--from", "skipper.v1.0.0", "--installed-version", "1.0.0"}, 0, ""},
		{[]string{"--from", "1.0.0", "--installed-version", "v1.0.0"}, 0, ""},
		{[]string{"--from", "skipper-gone", "--installed-version", "0.5.0"}, 0, ""},
	} {
		for _, olm := range []string{"v1", "both"} {
			args := append([]string{"alpha", "query", "updates", cat, "-p", "skipper", "--olm", olm}, tc.args...)
			code, out, errOut := run(t, args...)
			if code != tc.code || errOut != tc.errOut {
				t.Errorf("%v: exit %d, stderr %q; want exit %d, stderr %q\n%s", args[4:], code, errOut, tc.code, tc.errOut, out)
			}
		}
	}
}

// TestQueryUpdatesInstalledVersionBoth: with --olm both, OLM v0 is asked
// about the same installed version as OLM v1: a bundle no catalog holds,
// named without a version, is covered by skipRange in both answers.
func TestQueryUpdatesInstalledVersionBoth(t *testing.T) {
	code, out, errOut := run(t, "alpha", "query", "updates", olmv1Catalog(), "-p", "skipper", "-c", "fast", "--olm", "both",
		"--from", "skipper-gone", "--installed-version", "0.5.0", "-o", "json")
	var u struct {
		V0 struct {
			Next *struct{ To struct{ Name string } }
		}
		V1 struct{ Bundle *struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(out), &u); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, errOut)
	}
	if u.V0.Next == nil || u.V0.Next.To.Name != "skipper.v2.0.0" || u.V1.Bundle == nil || u.V1.Bundle.Name != "skipper.v2.0.0" {
		t.Errorf("want both OLMs to move skipper-gone (0.5.0) to skipper.v2.0.0:\n%s", out)
	}
}
