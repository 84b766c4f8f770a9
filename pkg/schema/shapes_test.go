package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
)

// shapeBlobs returns the blobs of a synthetic catalog shape in canonical
// form.
func shapeBlobs(tb testing.TB, s shapecat.Shape, n int) []benchBlob {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(s.Bytes(n)))
	var blobs []benchBlob
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			tb.Fatal(err)
		}
		data, v, err := canonical(raw)
		if err != nil {
			tb.Fatal(err)
		}
		blobs = append(blobs, benchBlob{schema: v.(map[string]any)["schema"].(string), data: data})
	}
	return blobs
}

// TestCheckShapes: the blobs of every synthetic shape are valid and cost
// a handful of CUE evaluations whatever their number: numbers and the
// fields _Meta does not name leave the shapes alike, and no blob falls
// back to a whole-blob evaluation.
func TestCheckShapes(t *testing.T) {
	for _, s := range shapecat.Shapes {
		c, err := New()
		if err != nil {
			t.Fatal(err)
		}
		blobs := shapeBlobs(t, s, 500)
		for _, b := range blobs {
			if vs := c.Check(b.schema, b.data); len(vs) > 0 {
				t.Fatalf("%s: %s: %v", s.Name, b.data, vs)
			}
		}
		st := c.Stats()
		if st.ShapeEvals > 20 || st.RealEvals > 0 {
			t.Errorf("%s: %d blobs took %d shape and %d whole-blob evaluations, want at most 20 and 0", s.Name, len(blobs), st.ShapeEvals, st.RealEvals)
		}
	}
}

// BenchmarkCheckShapes checks every blob of each synthetic shape at the
// size of the project's targets, with a new Checker each time (cold memo),
// on one goroutine.
func BenchmarkCheckShapes(b *testing.B) {
	for _, s := range shapecat.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			blobs := shapeBlobs(b, s, 0)
			for b.Loop() {
				c, err := New()
				if err != nil {
					b.Fatal(err)
				}
				for _, bl := range blobs {
					if vs := c.Check(bl.schema, bl.data); len(vs) > 0 {
						b.Fatal(vs)
					}
				}
			}
		})
	}
}
