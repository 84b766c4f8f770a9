package httpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/cache"
)

// golden is what catalogd's own code gives for a test catalog
// (testdata/golden/catalogd/README.md says how it was recorded).
type golden struct {
	All   answer   `json:"all"`
	Metas []answer `json:"metas"`
}

type answer struct {
	Query  string `json:"query"`
	Size   int    `json:"size"`
	Lines  int    `json:"lines"`
	SHA256 string `json:"sha256"`
}

func (a answer) check(t *testing.T, what string, body []byte) {
	t.Helper()
	sum := sha256.Sum256(body)
	if len(body) != a.Size || bytes.Count(body, []byte("\n")) != a.Lines || hex.EncodeToString(sum[:]) != a.SHA256 {
		t.Errorf("%s: %d bytes, %d lines, sha256 %x; catalogd: %d bytes, %d lines, sha256 %s",
			what, len(body), bytes.Count(body, []byte("\n")), sum, a.Size, a.Lines, a.SHA256)
	}
}

// TestCatalogdGolden: /api/v1/all and every recorded /api/v1/metas query
// give catalogd's bytes, from a cold start and from a saved cache, at the
// root and under /catalogs/NAME/. The two largest catalogs (5 and 8 MB)
// are checked in the corpus build only.
func TestCatalogdGolden(t *testing.T) {
	const dir = "../../testdata/golden/catalogd"
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files in %s", dir)
	}
	queries, checked := 0, 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !testutil.Corpus && (name == "okderators" || name == "percona-everest") {
			continue
		}
		checked++
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g golden
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(g.Metas) == 0 {
			t.Fatalf("%s: no metas queries", f)
		}
		t.Run(name, func(t *testing.T) {
			for _, snap := range []*cache.Snapshot{snapshot(t, name, false), snapshot(t, name, true), derivedSnapshot(t, name)} {
				ts := newTestServer(t, snap, "golden")
				for _, prefix := range []string{"", "/catalogs/golden"} {
					resp, body := ts.do(t, "GET", prefix+"/api/v1/all")
					if resp.StatusCode != 200 {
						t.Fatalf("all: %d", resp.StatusCode)
					}
					g.All.check(t, prefix+"/api/v1/all", body)
					if jsonl, err := os.ReadFile(filepath.Join(dir, name+".jsonl")); err == nil && !bytes.Equal(body, jsonl) {
						t.Errorf("all differs from %s.jsonl", name)
					}
					for _, q := range g.Metas {
						resp, body := ts.do(t, "GET", prefix+"/api/v1/metas?"+q.Query)
						if resp.StatusCode != 200 {
							t.Fatalf("metas?%s: %d", q.Query, resp.StatusCode)
						}
						q.check(t, "metas?"+q.Query, body)
						queries++
					}
				}
			}
		})
	}
	t.Logf("%d catalogs, %d metas answers compared", checked, queries)
}
