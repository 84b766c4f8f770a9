//go:build corpus

package install

import (
	"context"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
)

// TestHostileCELCorpus: the hostile shape at its size, with the real cost
// limit: undecided on its first candidate (OLM's evaluation of the rule
// over 20 bundles of 100 properties runs for minutes).
func TestHostileCELCorpus(t *testing.T) {
	r, err := NewResolver(hostile(t, "cel-nested", 100))
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != Undecided || !strings.Contains(a.Error, "costs more than the limit of 1000000") {
		t.Fatalf("got %s: %s", a.Status, a.Error)
	}
}
