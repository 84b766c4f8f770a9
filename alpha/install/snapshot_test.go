package install

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// snapshotCatalogs are real catalogs of the repository's testdata (see
// testdata/README.md) and a hand-made one with every property the
// resolver reads.
func snapshotCatalogs(t *testing.T) map[string]*Catalog {
	t.Helper()
	out := map[string]*Catalog{}
	for i, dir := range []string{"install/community", "install/certified", "install/marketplace",
		"catalogs/okderators", "catalogs/percona-everest", "catalogs/kube-descheduler-v4.12", "catalogs/submariner-v4.14", "catalogs/fixture-olm-deprecations"} {
		cat, _, err := Load(context.Background(), os.DirFS("../../testdata/"+dir), dir, i%3)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out[dir] = cat
	}
	out["hand-made"] = newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1", "a.v2<a.v1|skips=a.v0|range=>=0.1.0 <2.0.0").channel("a", "beta", "a.v2").
		bundle("a", "a.v1", "1.0.0", needGVK("g", "v", "K"), prop{"olm.label", `{"label":"x"}`}).
		bundle("a", "a.v2", "2.0.0", needGVK("g", "v", "K"), needPkg("b", ">=1.0.0"), prop{"olm.deprecated", `{}`},
			prop{"olm.bundle.object", `{"data":"e30="}`}, prop{"olm.csv.metadata", `{"displayName":"A"}`}).
		pkg("b", "stable").channel("b", "stable", "b.v1").
		bundle("b", "b.v1", "1.0.0", gvk("g", "v", "K"), prop{"olm.label.required", `{"label":"x"}`},
			constraintProp(`{"failureMessage":"needs a","cel":{"rule":"properties.exists(p, p.type == 'olm.label' && p.value.label == 'x')"}}`)).
		load(t, "hand-made", 5)
	return out
}

// everything is what a resolver over cats answers: every package, channel
// and starting bundle of each catalog, as JSON.
func everything(t *testing.T, cats ...*Catalog) []byte {
	t.Helper()
	r, err := NewResolver(cats...)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, c := range cats {
		rep, err := r.All(context.Background(), c.Name, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(&out).Encode(rep); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// A catalog rebuilt from its snapshot answers every question as the
// catalog loaded from its files, alone and together with others, and its
// snapshot is the same bytes.
func TestSnapshotAnswersAsLoaded(t *testing.T) {
	t.Parallel()
	loaded := snapshotCatalogs(t)
	decoded := map[string]*Catalog{}
	for name, cat := range loaded {
		snap := cat.AppendSnapshot(nil)
		d, err := DecodeSnapshot(snap, cat.Name, cat.Priority)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if again := d.AppendSnapshot(nil); !bytes.Equal(again, snap) {
			t.Errorf("%s: the decoded catalog's snapshot differs", name)
		}
		decoded[name] = d
		if got, want := everything(t, d), everything(t, cat); !bytes.Equal(got, want) {
			t.Errorf("%s: answers differ\n got: %.600s\nwant: %.600s", name, got, want)
		}
	}
	// Together, priorities and dependencies across catalogs.
	names := []string{"install/community", "install/certified", "install/marketplace", "hand-made"}
	var l, d []*Catalog
	for _, n := range names {
		l, d = append(l, loaded[n]), append(d, decoded[n])
	}
	if got, want := everything(t, d...), everything(t, l...); !bytes.Equal(got, want) {
		t.Errorf("together: answers differ\n got: %.600s\nwant: %.600s", got, want)
	}
}

// Damaged bytes are refused, never half decoded.
func TestSnapshotDamaged(t *testing.T) {
	t.Parallel()
	cat, _, err := Load(context.Background(), os.DirFS("../../testdata/install/community"), "community", 0)
	if err != nil {
		t.Fatal(err)
	}
	snap := cat.AppendSnapshot(nil)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"cut short", snap[:len(snap)/2]},
		{"a byte changed", func() []byte { b := bytes.Clone(snap); b[len(b)/2] ^= 4; return b }()},
		{"another version", func() []byte { b := bytes.Clone(snap); b[7]++; return b }()},
		{"extra bytes", append(bytes.Clone(snap), 0)},
	} {
		if c, err := DecodeSnapshot(tc.b, "c", 0); !errors.Is(err, ErrBadSnapshot) || c != nil {
			t.Errorf("%s: %v, %v; want ErrBadSnapshot", tc.name, c, err)
		}
	}
}

// FuzzDecodeSnapshot: whatever the bytes (checksum included, so that the
// decoder itself is reached), DecodeSnapshot never panics, and what it
// accepts encodes back to the same bytes.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(newFBC().pkg("a", "stable").channel("a", "stable", "a.v1<a.v0|skips=x").bundle("a", "a.v1", "1.0.0", needGVK("g", "v", "K")).
		load(f, "c", 0).AppendSnapshot(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Give the bytes a valid checksum, the decoder's real input.
		if len(data) >= 8 {
			data = append([]byte(snapshotMagic), data[:len(data)-8]...)
			data = withChecksum(data)
		}
		c, err := DecodeSnapshot(data, "c", 0)
		if err != nil {
			return
		}
		if again := c.AppendSnapshot(nil); len(again) == 0 {
			t.Fatal("empty snapshot")
		}
	})
}

// withChecksum appends the XXH64 of b, as AppendSnapshot does.
func withChecksum(b []byte) []byte {
	return binary.BigEndian.AppendUint64(b, xxhash.Sum64(b))
}
