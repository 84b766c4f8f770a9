package httpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/internal/testutil"
)

// cliUpdates is `opm alpha query updates DIR -p pkg -c channel --from from
// -o json`'s answer, decoded into generic JSON: the model, and each
// step's CRDs compared.
func cliUpdates(t *testing.T, dir, pkg, channel, from string) any {
	t.Helper()
	return cliUpdater(t, dir, pkg)(channel, from)
}

// cliUpdater reads the catalog and the package's CRDs once and gives
// cliUpdates's answer for each channel and bundle asked.
func cliUpdater(t *testing.T, dir, pkg string) func(channel, from string) any {
	t.Helper()
	cat, err := action.OpenModel(t.Context(), action.DirResolver{}, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	ix, err := cat.CRDs(t.Context(), func(p, _ string) bool { return p == pkg })
	if err != nil {
		t.Fatal(err)
	}
	crds, err := action.CompareCRDs(context.Background(), ix)
	if err != nil {
		t.Fatal(err)
	}
	return func(channel, from string) any {
		t.Helper()
		a, err := updates.Query{Model: cat.Model, Package: pkg, Channel: channel, From: from, CRDs: crds}.Run()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// cronCRD is a CustomResourceDefinition of the given scope.
func cronCRD(scope string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  names: {kind: CronTab, plural: crontabs, singular: crontab, listKind: CronTabList}
  scope: ` + scope + `
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
`
}

// writeCron writes a catalog whose package cron has the chain cron.v1 ←
// cron.v2 ← cron.v3: v1 and v2 carry their CRD as objects (v2's changes
// scope), v3 only olm.csv.metadata.
func writeCron(t *testing.T) string {
	t.Helper()
	obj := func(manifest string) map[string]any {
		return map[string]any{"type": "olm.bundle.object", "value": map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(manifest))}}
	}
	blobs := []any{
		map[string]any{"schema": "olm.package", "name": "cron", "defaultChannel": "stable"},
		map[string]any{"schema": "olm.channel", "package": "cron", "name": "stable", "entries": []any{
			map[string]any{"name": "cron.v1"},
			map[string]any{"name": "cron.v2", "replaces": "cron.v1"},
			map[string]any{"name": "cron.v3", "replaces": "cron.v2"},
		}},
	}
	for i, extra := range []map[string]any{obj(cronCRD("Namespaced")), obj(cronCRD("Cluster")), {"type": "olm.csv.metadata", "value": map[string]any{"displayName": "Cron"}}} {
		v := fmt.Sprintf("%d.0.0", i+1)
		blobs = append(blobs, map[string]any{"schema": "olm.bundle", "package": "cron", "name": fmt.Sprintf("cron.v%d", i+1), "image": "example.com/cron:v" + v,
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]string{"packageName": "cron", "version": v}}, extra}})
	}
	return testutil.WriteFBC(t, blobs...)
}

// TestUpdatesCRDs: /api/v1/updates gives each step's CRD changes, as the
// CLI does, read from the snapshot's lines when first asked for; many
// requests at once share one read.
func TestUpdatesCRDs(t *testing.T) {
	dir := writeCron(t)
	ts := newTestServer(t, snapshotDir(t, dir), "cron")
	path := "/api/v1/updates?" + url.Values{"package": {"cron"}, "from": {"cron.v1"}}.Encode()
	var (
		wg     sync.WaitGroup
		bodies [4][]byte
		codes  [4]int
	)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := ts.do(t, "GET", path)
			codes[i], bodies[i] = resp.StatusCode, body
		}()
	}
	wg.Wait()
	for i := range bodies {
		if codes[i] != 200 || string(bodies[i]) != string(bodies[0]) {
			t.Fatalf("request %d: %d\n%s\nfirst:\n%s", i, codes[i], bodies[i], bodies[0])
		}
	}
	var a updates.Answer
	if err := json.Unmarshal(bodies[0], &a); err != nil || len(a.Path) != 2 {
		t.Fatalf("%v\n%s", err, bodies[0])
	}
	if c := a.Path[0].CRDs; c == nil || c.Unknown != "" || len(c.Changes) != 1 || c.Changes[0].Check != "scope" || !c.Refused() {
		t.Errorf("cron.v1 -> cron.v2: %+v", c)
	}
	if c := a.Path[1].CRDs; c == nil || !strings.Contains(c.Unknown, "bundle cron.v3 carries no objects") {
		t.Errorf("cron.v2 -> cron.v3: %+v", c)
	}
	var got any
	if err := json.Unmarshal(bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprint(got), fmt.Sprint(cliUpdates(t, dir, "cron", "", "cron.v1")); g != w {
		t.Errorf("HTTP:\n%s\nCLI:\n%s", g, w)
	}
}
