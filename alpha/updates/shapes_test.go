package updates_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/internal/shapecat"
)

// shapeModel loads a synthetic catalog of shape s with size n (the shape's
// own N when n <= 0).
func shapeModel(tb testing.TB, s shapecat.Shape, n int) model.Model {
	tb.Helper()
	res, err := action.Validate{FS: s.FS(n), SkipSchema: true}.Run(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if err := res.Err(); err != nil {
		tb.Fatal(err)
	}
	return res.Model
}

// TestShapes answers query updates --all and diff --check on every
// synthetic shape: every bundle reaches the head, in the number of steps
// the shape implies, and a catalog against itself has no changes and no
// violations.
func TestShapes(t *testing.T) {
	const n = 300
	for _, s := range shapecat.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			m := shapeModel(t, s, n)
			pkg := m[shapecat.Package]
			answered := 0
			for _, ch := range pkg.Channels {
				as, err := updates.Query{Model: m, Package: shapecat.Package, Channel: ch.Name}.RunAll()
				if err != nil {
					t.Fatal(err)
				}
				for i, a := range as {
					want := 1 // skips, skiprange: the head skips or covers them all
					switch {
					case i == 0:
						want = 0 // the head
					case s.Name == "chain":
						want = i
					}
					if !a.ReachesHead || a.Steps != want || a.Problem != "" {
						t.Fatalf("channel %s, %s: %d steps, reaches head %v, %q; want %d steps", ch.Name, a.Installed.Name, a.Steps, a.ReachesHead, a.Problem, want)
					}
				}
				answered += len(as)
				if len(pkg.Channels) > 1 && answered > 20 {
					break // the channels shapes: a sample is enough
				}
			}
			if vs := updates.Check(m, m); len(vs) > 0 {
				t.Fatalf("a catalog against itself: %v", vs[0])
			}
			if cs := updates.Diff(m, m); len(cs) > 0 {
				t.Fatalf("a catalog against itself: %v", cs[0])
			}
		})
	}
}

// BenchmarkUpdatesShapes times query updates --all (the table and JSON)
// and diff --check of a catalog with itself on every synthetic shape at
// its full size (the model is loaded once, outside the timing).
func BenchmarkUpdatesShapes(b *testing.B) {
	for _, s := range shapecat.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			m := shapeModel(b, s, 0)
			q := updates.Query{Model: m, Package: shapecat.Package}
			b.Run("all", func(b *testing.B) {
				for b.Loop() {
					as, err := q.RunAll()
					if err != nil {
						b.Fatal(err)
					}
					if err := updates.WriteTable(io.Discard, as); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("all-json", func(b *testing.B) {
				for b.Loop() {
					as, err := q.RunAll()
					if err != nil {
						b.Fatal(err)
					}
					if err := json.NewEncoder(io.Discard).Encode(as); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("check", func(b *testing.B) {
				for b.Loop() {
					if vs := updates.Check(m, m); len(vs) > 0 {
						b.Fatal(vs[0])
					}
					if cs := updates.Diff(m, m); len(cs) > 0 {
						b.Fatal(cs[0])
					}
				}
			})
		})
	}
}

// TestAllJSONLeavesOutPaths: --all's JSON gives each bundle's next step
// and step count, not its path, so that its size grows with the channel.
func TestAllJSONLeavesOutPaths(t *testing.T) {
	s, _ := shapecat.Lookup("chain")
	m := shapeModel(t, s, 50)
	as, err := updates.Query{Model: m, Package: shapecat.Package}.RunAll()
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(as)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `"path"`) || !strings.Contains(string(out), `"steps":49`) {
		t.Errorf("--all JSON: %.300s", out)
	}
	one, err := updates.Query{Model: m, Package: shapecat.Package, From: fmt.Sprintf("%s.v1.0.0", shapecat.Package)}.Run()
	if err != nil {
		t.Fatal(err)
	}
	out, err = json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"path":[{`) || len(one.Path) != 49 {
		t.Errorf("--from JSON: %.300s", out)
	}
}
