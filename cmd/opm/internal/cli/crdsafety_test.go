package cli

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/internal/testutil"
)

// cronCRD is a CRD of CronTab in YAML: versions v1 (served) and v2
// (served, stored), spec.size an integer, spec.mode one of modes.
func cronCRD(scope, modes string) string {
	schema := `
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
                mode: {type: string, enum: [` + modes + `]}`
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: ` + scope + `
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
    - name: v1
      served: true
      storage: false` + schema + `
    - name: v2
      served: true
      storage: true` + schema + "\n"
}

// writeCronCatalog writes a catalog of package cron, channel stable, whose
// bundles each replace the one before and carry the CRD given for them
// (as olm.bundle.object properties, as opm render writes them); a bundle's
// image is tagged with its CRD's digest, as a rebuilt bundle gets a new
// image.
func writeCronCatalog(t *testing.T, crds ...string) string {
	t.Helper()
	return writeCronCatalogImages(t, true, crds...)
}

// writeCronCatalogImages is writeCronCatalog; without rebuilt, a bundle's
// image is tagged with its version alone, whatever its CRD (a tag pushed
// again).
func writeCronCatalogImages(t *testing.T, rebuilt bool, crds ...string) string {
	t.Helper()
	var entries []map[string]string
	for i := range crds {
		e := map[string]string{"name": "cron.v" + string(rune('1'+i))}
		if i > 0 {
			e["replaces"] = entries[i-1]["name"]
		}
		entries = append(entries, e)
	}
	blobs := []any{
		map[string]any{"schema": "olm.package", "name": "cron", "defaultChannel": "stable"},
		map[string]any{"schema": "olm.channel", "package": "cron", "name": "stable", "entries": entries},
	}
	for i, crd := range crds {
		obj := func(manifest string) map[string]any {
			return map[string]any{"type": "olm.bundle.object", "value": map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(manifest))}}
		}
		v := string(rune('1'+i)) + ".0.0"
		sum := sha256.Sum256([]byte(crd))
		image := "example.com/cron:v" + v
		if rebuilt {
			image += "-" + hex.EncodeToString(sum[:4])
		}
		blobs = append(blobs, map[string]any{"schema": "olm.bundle", "package": "cron", "name": entries[i]["name"], "image": image,
			"properties": []any{
				map[string]any{"type": "olm.package", "value": map[string]string{"packageName": "cron", "version": v}},
				obj("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: " + entries[i]["name"] + "\n"),
				obj(crd),
			}})
	}
	return testutil.WriteFBC(t, blobs...)
}

// TestCRDUpgradeSafety: a new bundle whose CRD changes scope and narrows
// an enum is an update both OLMs refuse; diff --check fails on it, query
// updates lists it.
func TestCRDUpgradeSafety(t *testing.T) {
	v1 := cronCRD("Namespaced", "a, b, c")
	v2 := cronCRD("Namespaced", "a, b, c, d") // an enum value added: fine
	v3 := cronCRD("Cluster", "a, b")
	old := writeCronCatalog(t, v1, v2)
	new := writeCronCatalog(t, v1, v2, v3)

	code, out, errOut := run(t, "alpha", "diff", old, new, "--check")
	for _, want := range []string{
		"\ncheck failed: 3 violations, 0 warnings\n",
		"\nviolation [crd-upgrade] cron/stable/cron.v3: update from cron.v2: CRD crontabs.stable.example.com: scope: scope changed : \"Namespaced\" -> \"Cluster\" (OLM v0 and v1 refuse it)\n",
		`violation [crd-upgrade] cron/stable/cron.v3: update from cron.v2: CRD crontabs.stable.example.com v1 ^.spec.mode: enum: allowed enum values removed : ["c" "d"] (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)`,
		`cron/stable/cron.v3: update from cron.v2: CRD crontabs.stable.example.com v2 ^.spec.mode: enum`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --check lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || errOut != "" || strings.Contains(out, "update from cron.v1") {
		t.Errorf("diff --check: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// The update v1 → v2 is not new: only new updates are checked.
	if code, out, _ := run(t, "alpha", "diff", old, old, "--check"); code != 0 || out != "no changes\ncheck passed: 0 violations, 0 warnings\n" {
		t.Errorf("same: exit %d\n%s", code, out)
	}
	// A bundle rebuilt (a new image) with another CRD makes its update new
	// again.
	rebuilt := writeCronCatalog(t, v1, cronCRD("Namespaced", "a"))
	code, out, _ = run(t, "alpha", "diff", old, rebuilt, "--check", "-o", "json")
	var rep diffReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || len(rep.Violations) != 2 || rep.Violations[0].Rule != "crd-upgrade" || rep.Violations[0].Bundle != "cron.v2" {
		t.Errorf("rebuilt: exit %d, %v\n%s", code, err, out)
	}
	// The changed CRD is a change, by kind and name, above the
	// violations it causes.
	if code, out, _ := run(t, "alpha", "diff", old, rebuilt, "--check"); code != 1 ||
		!strings.HasPrefix(out, "package cron\n  bundle cron.v2: object CustomResourceDefinition crontabs.stable.example.com changed\n  channel stable: cron.v2 image ") {
		t.Errorf("rebuilt, text: exit %d\n%s", code, out)
	}

	// query updates: the step OLM refuses, with its changes.
	code, out, errOut = run(t, "alpha", "query", "updates", new, "-p", "cron", "--from", "cron.v1")
	for _, want := range []string{
		"crds:\n  cron.v2 -> cron.v3: 3 incompatible CRD changes: OLM v0 and v1 refuse it\n",
		`    CRD crontabs.stable.example.com: scope: scope changed : "Namespaced" -> "Cluster" (OLM v0 and v1 refuse it)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("query updates lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || strings.Contains(out, "cron.v1 -> cron.v2:") || !strings.HasSuffix(out, "\n  1 other step compared: no incompatible change\n") {
		t.Errorf("query updates: exit %d, %s\n%s", code, errOut, out)
	}
	// Compared and nothing refused: said, not left out (issue 27).
	code, out, _ = run(t, "alpha", "query", "updates", old, "-p", "cron", "--from", "cron.v1")
	if code != 0 || !strings.HasSuffix(out, "\ncrds:\n  every step compared (1 step): no incompatible change\n") {
		t.Errorf("query updates, nothing refused: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "alpha", "query", "updates", new, "-p", "cron", "--from", "cron.v1", "-o", "json")
	var a updates.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != 0 || len(a.Path) != 2 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	if c := a.Path[0].CRDs; c == nil || c.Unknown != "" || len(c.Changes) != 0 {
		t.Errorf("step 1: %+v", c)
	}
	if c := a.Path[1].CRDs; c == nil || len(c.Changes) != 3 || !c.Refused() {
		t.Errorf("step 2: %+v", c)
	}
	// A catalog whose bundles carry no objects: not compared, said once.
	code, out, _ = run(t, "alpha", "query", "updates", filepath.Join(goldenRoot, "updates"), "-p", "etcd", "--from", "etcdoperator.v0.9.1")
	if code != 0 || !strings.HasSuffix(out, "\ncrds:\n  2 step(s) not compared: a bundle carries no objects (olm.bundle.object) or is not in the catalog\n") {
		t.Errorf("no objects: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "alpha", "query", "updates", new, "-p", "cron", "--all")
	if code != 0 || !strings.Contains(out, "REACHES HEAD\n") || !strings.HasSuffix(out, "crds:\n  cron.v2 -> cron.v3: 3 incompatible CRD changes: OLM v0 and v1 refuse it\n"+
		`    CRD crontabs.stable.example.com: scope: scope changed : "Namespaced" -> "Cluster" (OLM v0 and v1 refuse it)`+"\n"+
		`    CRD crontabs.stable.example.com v1 ^.spec.mode: enum: allowed enum values removed : ["c" "d"] (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)`+"\n"+
		`    CRD crontabs.stable.example.com v2 ^.spec.mode: enum: allowed enum values removed : ["c" "d"] (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)`+"\n") {
		t.Errorf("--all: exit %d\n%s", code, out)
	}
	// --all -o json: each summary's next step carries its CRDs.
	code, out, _ = run(t, "alpha", "query", "updates", new, "-p", "cron", "--all", "-o", "json")
	var sums []updates.Summary
	if err := json.Unmarshal([]byte(out), &sums); err != nil || code != 0 || len(sums) != 3 {
		t.Fatalf("--all json: exit %d, %v\n%s", code, err, out)
	}
	for _, s := range sums {
		switch s.Installed.Name {
		case "cron.v3":
			if s.Next != nil {
				t.Errorf("--all json: the head has a next step %+v", s.Next)
			}
		case "cron.v2":
			if s.Next == nil || s.Next.CRDs == nil || len(s.Next.CRDs.Changes) != 3 || !s.Next.CRDs.Refused() {
				t.Errorf("--all json: %s: %+v", s.Installed.Name, s.Next)
			}
		case "cron.v1":
			if s.Next == nil || s.Next.CRDs == nil || s.Next.CRDs.Unknown != "" || len(s.Next.CRDs.Changes) != 0 {
				t.Errorf("--all json: %s: %+v", s.Installed.Name, s.Next)
			}
		}
	}
}

// TestCRDUpgradeInPlace: a bundle whose CRD a new catalog changes in
// place (same name, same image tag) is checked again: clusters that
// installed it keep its old CRD, and clusters below it get the new one.
func TestCRDUpgradeInPlace(t *testing.T) {
	wide := cronCRD("Namespaced", "a, b, c")
	narrow := cronCRD("Namespaced", "a, b")
	old := writeCronCatalogImages(t, false, wide, wide, wide)

	// cron.v2 narrowed in place: the update v1 → v2 now narrows the enum,
	// and v2 → v3 widens it (fine), checked from v2's old CRD.
	new := writeCronCatalogImages(t, false, wide, narrow, wide)
	code, out, errOut := run(t, "alpha", "diff", old, new, "--check")
	for _, want := range []string{
		"  bundle cron.v2: object CustomResourceDefinition crontabs.stable.example.com changed\n",
		`violation [crd-upgrade] cron/stable/cron.v2: update from cron.v1: CRD crontabs.stable.example.com v1 ^.spec.mode: enum: allowed enum values removed : ["c"] (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it) (the new catalog changed the objects of cron.v2 in place; clusters that installed it run the old ones)`,
		"\ncheck failed: 2 violations, 0 warnings\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("v2 changed in place: diff --check lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || errOut != "" || strings.Contains(out, "update from cron.v2") {
		t.Errorf("v2 changed in place: exit %d, stderr %q\n%s", code, errOut, out)
	}

	// cron.v1 and v2 both narrowed in place: in the new catalog alone v1 →
	// v2 changes nothing, but a cluster running v1 has the wide CRD.
	new = writeCronCatalogImages(t, false, narrow, narrow, wide)
	code, out, _ = run(t, "alpha", "diff", old, new, "--check")
	if want := `violation [crd-upgrade] cron/stable/cron.v2: update from cron.v1: CRD crontabs.stable.example.com v1 ^.spec.mode: enum: allowed enum values removed : ["c"] (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it) (the new catalog changed the objects of cron.v1 and cron.v2 in place; clusters that installed it run the old ones)`; code != 1 || !strings.Contains(out, want) {
		t.Errorf("v1 and v2 changed in place: exit %d, want 1 and %q\n%s", code, want, out)
	}

	// A refusal the old catalog had already is not new: v2 → v3 narrowed
	// the enum before, and still does after v3 gained a field in place.
	before := writeCronCatalogImages(t, false, wide, wide, narrow)
	withNote := strings.ReplaceAll(narrow, "enum: [a, b]}", "enum: [a, b]}\n                note: {type: string}")
	if withNote == narrow {
		t.Fatal("no field added")
	}
	after := writeCronCatalogImages(t, false, wide, wide, withNote)
	code, out, _ = run(t, "alpha", "diff", before, after, "--check")
	if code != 0 || !strings.Contains(out, "  bundle cron.v3: object CustomResourceDefinition crontabs.stable.example.com changed\n") || !strings.Contains(out, "check passed") {
		t.Errorf("old refusal: exit %d\n%s", code, out)
	}
	// And a new refusal beside it is.
	after = writeCronCatalogImages(t, false, wide, wide, strings.ReplaceAll(withNote, "Namespaced", "Cluster"))
	code, out, _ = run(t, "alpha", "diff", before, after, "--check")
	if want := `violation [crd-upgrade] cron/stable/cron.v3: update from cron.v2: CRD crontabs.stable.example.com: scope: scope changed : "Namespaced" -> "Cluster" (OLM v0 and v1 refuse it) (the new catalog changed the objects of cron.v3 in place; clusters that installed it run the old ones)`; code != 1 ||
		!strings.Contains(out, want) || strings.Contains(out, "enum") || !strings.Contains(out, "check failed: 1 violation, 0 warnings") {
		t.Errorf("new refusal beside an old one: exit %d, want 1 and %q alone\n%s", code, want, out)
	}
}
