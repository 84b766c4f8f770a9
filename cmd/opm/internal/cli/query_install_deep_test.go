package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
)

// depChain writes shapecat's dep-chain of n packages (package shape
// depending on dep-1, ..., dep-(n-1) on dep-n) and returns its directory.
func depChain(t *testing.T, n int) string {
	t.Helper()
	s, _ := shapecat.LookupAny("dep-chain")
	dir := filepath.Join(t.TempDir(), "dep-chain")
	if err := s.WriteDir(dir, n); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkDeepChain asks what a new Subscription to the dep-chain of n
// installs, in text and JSON: installable, every bundle, text of at most
// maxBytes whose lines are no wider than a tree 8 deep draws, JSON that
// nests a bounded number of levels (Python reads 1000) and reads back,
// each bundle where a tree stops heading the next continuation. It
// returns the text's size.
func checkDeepChain(t *testing.T, n, maxBytes int) int {
	t.Helper()
	dir := depChain(t, n)
	code, out, errOut := run(t, "alpha", "query", "install", dir, "-p", shapecat.Package)
	if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("A subscription to package shape, from catalog dep-chain installs %d bundles:\n", n+1)) {
		t.Fatalf("n=%d: exit %d, %s\n%.300s", n, code, errOut, out)
	}
	if len(out) > maxBytes {
		t.Errorf("n=%d: %d bytes of text, more than %d", n, len(out), maxBytes)
	}
	for _, l := range strings.Split(out, "\n") {
		if w := len([]rune(l)); w > 8*8+len("dep-10000.v1.0.0 (dep-10000 1.0.0, channel stable, catalog dep-chain) (continued from above)") {
			t.Fatalf("n=%d: a line of %d characters:\n%s", n, w, l)
		}
	}
	continued := strings.Count(out, ") (continued below)\n")
	if continued == 0 || strings.Count(out, ") (continued from above)\n") != continued {
		t.Errorf("n=%d: %d bundles continued below, %d continuations", n, continued, strings.Count(out, ") (continued from above)\n"))
	}

	code, out, errOut = run(t, "alpha", "query", "install", dir, "-p", shapecat.Package, "-o", "json")
	if code != 0 {
		t.Fatalf("n=%d, -o json: exit %d, %s", n, code, errOut)
	}
	if len(out) > 10*maxBytes {
		t.Errorf("n=%d: %d bytes of JSON, more than %d", n, len(out), 10*maxBytes)
	}
	if d := testutil.JSONDepth(t, []byte(out)); d > 40 {
		t.Errorf("n=%d: the JSON nests %d deep", n, d)
	}
	var a install.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("n=%d: %v", n, err)
	}
	if a.Status != install.Installable || len(a.Installs) != n+1 || len(a.Continuations) != continued {
		t.Fatalf("n=%d: %s, %d installs, %d continuations (text: %d)", n, a.Status, len(a.Installs), len(a.Continuations), continued)
	}
	// Each tree ends at a bundle marked continued, the head of the next.
	tops := append([]*install.Node{a.Tree}, a.Continuations...)
	for i, top := range tops[:len(tops)-1] {
		node := top
		for len(node.Dependencies) > 0 {
			node = node.Dependencies[0].Provider
		}
		if !node.Continued || node.Bundle != tops[i+1].Bundle {
			t.Fatalf("n=%d: tree %d ends at %+v; continuation %d is %s", n, i, node, i+1, tops[i+1].Bundle)
		}
	}
	return len(out)
}

// TestQueryInstallDeepChain: the answer for a chain of dependencies grows
// with its length (twice the chain, about twice the text), not with its
// square; drawn as one tree, a 10,000-deep chain took 801 MB of text, and
// a 5,000-deep one failed to encode as JSON and exited 1.
func TestQueryInstallDeepChain(t *testing.T) {
	small := checkDeepChain(t, 150, 150*250)
	large := checkDeepChain(t, 300, 300*250)
	if large > 2*small+small/10 {
		t.Errorf("text of %d bytes for 150 dependencies, %d for 300", small, large)
	}
}

// TestQueryInstallChain10000 is the case: a 10,000-deep chain
// (corpus run only: 1 s to resolve and print).
func TestQueryInstallChain10000(t *testing.T) {
	if !testutil.Corpus {
		t.Skip("the corpus run answers the 10,000-deep chain; the race suite the 300-deep one (TestQueryInstallDeepChain)")
	}
	checkDeepChain(t, 10000, 10000*250)
}
