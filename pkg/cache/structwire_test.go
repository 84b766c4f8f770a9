package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// referenceStruct is how the cache encoded custom blobs before
// structEncoder, and what upstream's server sends: encoding/json into a
// map, structpb, deterministic proto.Marshal.
func referenceStruct(canon []byte) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(canon, &v); err != nil {
		return nil, err
	}
	s, err := structpb.NewStruct(v)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(s)
}

func checkStructEncoding(t *testing.T, name string, canon []byte) {
	t.Helper()
	want, wantErr := referenceStruct(canon)
	var enc structEncoder
	got, err := enc.appendStruct(nil, canon)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, reference error %v\nblob: %.300s", name, err, wantErr, canon)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%s: encoding differs from structpb's\nblob: %.300s\ngot  %x\nwant %x", name, canon, got, want)
	}
}

var structCases = []string{
	`{}`,
	`{"a":null,"b":true,"c":false,"d":0,"e":-0,"f":1.5e300,"g":"","h":"x\u00e9\n\"\\","i":[],"j":{}}`,
	`{"schema":"x","nested":{"l":[1,"two",null,false,{"k":[[],[{}]]}],"z":{"":""}}}`,
	`{"\u00e9":1,"a\"":2,"a#":3,"a\\":4,"Z":5,"a":6}`,
	`{"n":[123456789012345678901234567890,1e-320,-2.5,4.9e-324]}`,
	`{"big":1e400}`,
	`[1]`,
}

func TestStructEncoderCases(t *testing.T) {
	for i, c := range structCases {
		canon, err := canonjson.Canonicalize([]byte(c))
		if err != nil {
			// Not canonicalizable (1e400): feed it as it is.
			canon = []byte(c)
		}
		checkStructEncoding(t, "case "+string(rune('0'+i)), canon)
	}
	// A repeated key keeps the last value, as a map does.
	checkStructEncoding(t, "repeated key", []byte(`{"a":1,"a":2}`))
	// The encoder's scratch space is reused across calls.
	var enc structEncoder
	for _, c := range []string{`{"a":{"b":{"c":[1,2,3]}}}`, `{"x":"y"}`, `{"a":{"b":{"c":[1,2,3]}}}`} {
		got, err := enc.appendStruct(nil, []byte(c))
		want, _ := referenceStruct([]byte(c))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("reused encoder on %s: %x, %v; want %x", c, got, err, want)
		}
	}
}

// TestStructEncoderCatalogs checks every blob of the repository's test
// catalogs, whatever its schema (the largest in the corpus build only).
func TestStructEncoderCatalogs(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "catalogs")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		// The largest catalog (8 MB) in the corpus build only.
		if !testutil.Corpus && d.Name() == "percona-everest" {
			continue
		}
		var blobs [][]byte
		err := declcfg.Walk(context.Background(), os.DirFS(filepath.Join(root, d.Name())), func(b *declcfg.Blob) error {
			blobs = append(blobs, bytes.Clone(b.JSON))
			return nil
		}, declcfg.WithConcurrency(1))
		if _, ok := err.(declcfg.Errors); err != nil && !ok {
			t.Fatal(err)
		}
		for _, b := range blobs {
			checkStructEncoding(t, d.Name(), b)
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d blobs checked", n)
	}
}

func FuzzStructEncoder(f *testing.F) {
	for _, c := range structCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(strings.Repeat(`{"a":`, 50) + `1` + strings.Repeat(`}`, 50)))
	f.Fuzz(func(t *testing.T, data []byte) {
		canon, err := canonjson.Canonicalize(data)
		if err != nil || canonjson.Kind(canon) != '{' {
			return
		}
		checkStructEncoding(t, "fuzz", canon)
	})
}
