package action

import (
	"context"
	"fmt"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
)

// TestValidateShapes: every synthetic catalog shape is valid, and its
// model has the graph the shape describes.
func TestValidateShapes(t *testing.T) {
	const n = 300
	for _, s := range shapecat.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			res, err := (Validate{FS: s.FS(n)}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed() || len(res.Problems) > 0 {
				t.Fatalf("problems: %v", res.Problems)
			}
			pkg := res.Model[shapecat.Package]
			if pkg == nil || len(res.Model) != 1 {
				t.Fatalf("model has %d packages, want only %q", len(res.Model), shapecat.Package)
			}
			wantChannels, wantBundles := 1, 1
			switch s.Name {
			case "channels":
				wantChannels = n
			case "chain", "skips", "skiprange":
				wantBundles = n
			case "shared-bundle":
				wantChannels = n
			}
			if len(pkg.Channels) != wantChannels {
				t.Fatalf("%d channels, want %d", len(pkg.Channels), wantChannels)
			}
			for name, ch := range pkg.Channels {
				if len(ch.Bundles) != wantBundles {
					t.Fatalf("channel %s has %d bundles, want %d", name, len(ch.Bundles), wantBundles)
				}
				head, err := ch.Head()
				if err != nil {
					t.Fatalf("channel %s: %v", name, err)
				}
				want := "shape.v1.0.0"
				switch s.Name {
				case "channels":
					var i int
					fmt.Sscanf(name, "channel-%d", &i)
					want = fmt.Sprintf("shape.v1.0.%d", i)
				case "chain", "skips", "skiprange":
					want = fmt.Sprintf("shape.v1.0.%d", n-1)
				}
				if head.Name != want || !head.HasBlob {
					t.Fatalf("channel %s: head %s (has blob: %v), want %s", name, head.Name, head.HasBlob, want)
				}
			}
		})
	}
}
