package cache

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/fastopm/fastopm/pkg/registry"
)

// TestWriterBatches: records written in batches, small and large mixed,
// read back the same before the batch is written (ReadStash), after it,
// and from the Snapshot.
func TestWriterBatches(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "w")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	type stored struct {
		ref  registry.BodyRef
		data []byte
	}
	var all []stored
	check := func(when string) {
		t.Helper()
		for i, s := range all {
			got, err := w.ReadStash(s.ref)
			if err != nil || !bytes.Equal(got, s.data) {
				t.Fatalf("%s: record %d (%d bytes at %d): %v", when, i, len(s.data), s.ref.Off, err)
			}
		}
	}
	sizes := []int{10, 200, batchRecord, 3000, batchRecord + 1, 7, batchSize - 5, 40, 2 * batchSize, 1}
	for round := 0; round < 3; round++ {
		for i, n := range sizes {
			data := bytes.Repeat([]byte{byte(round*16 + i)}, n)
			ref, err := w.Stash(data)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, stored{ref, data})
			check(fmt.Sprintf("round %d, after record %d", round, i))
		}
	}
	if len(w.pending) == 0 {
		t.Fatal("the last small record is not pending: the test checks no pending read")
	}
	snap, err := w.Snapshot(&registry.Index{})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for i, s := range all {
		got, err := snap.read(s.ref.Off, s.ref.Len)
		if err != nil || !bytes.Equal(got, s.data) {
			t.Fatalf("snapshot: record %d: %v", i, err)
		}
	}
	if st, _ := f.Stat(); st.Size() != w.Size() {
		t.Errorf("file has %d bytes, writer stored %d", st.Size(), w.Size())
	}
}
