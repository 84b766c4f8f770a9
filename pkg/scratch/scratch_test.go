package scratch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestFile stores and reads back bytes, concurrently, in a file and in
// memory, and copies them into another file.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	file, err := Create(dir, "scratch-*")
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the scratch file is not unlinked: %v", entries)
	}
	readOnly := filepath.Join(dir, "missing", "dir")
	for _, s := range []*File{file, CreateOrMemory(readOnly, "x-*")} {
		t.Run(fmt.Sprintf("in memory %v", s.InMemory()), func(t *testing.T) {
			defer s.Close()
			var (
				wg   sync.WaitGroup
				offs [64]int64
			)
			for i := range offs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					off, err := s.Append(bytes.Repeat([]byte{byte(i)}, 100+i))
					if err != nil {
						t.Error(err)
					}
					offs[i] = off
				}()
			}
			wg.Wait()
			var total int64
			for i, off := range offs {
				got := make([]byte, 100+i)
				if _, err := s.ReadAt(got, off); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 100+i)) {
					t.Fatalf("record %d at %d: %v", i, off, err)
				}
				total += int64(100 + i)
			}
			if s.Size() != total {
				t.Errorf("size %d, want %d", s.Size(), total)
			}
			if _, err := s.ReadAt(make([]byte, 2), total-1); err != io.EOF {
				t.Errorf("read past the end: %v, want io.EOF", err)
			}
			dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			if err := s.CopyTo(dst, offs[7], 107); err != nil {
				t.Fatal(err)
			}
			if err := s.CopyTo(dst, offs[3], 103); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(dst.Name())
			want := append(bytes.Repeat([]byte{7}, 107), bytes.Repeat([]byte{3}, 103)...)
			if !bytes.Equal(got, want) {
				t.Errorf("CopyTo wrote %d bytes, not the records", len(got))
			}
			if err := s.CopyTo(dst, total-5, 10); err == nil {
				t.Error("CopyTo past the end: no error")
			}
		})
	}
}

func TestWrap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("head"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Wrap(f)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Size() != 4 || s.InMemory() {
		t.Fatalf("size %d, in memory %v; want 4 on disk", s.Size(), s.InMemory())
	}
	off, err := s.Append([]byte("tail"))
	if err != nil || off != 4 {
		t.Fatalf("Append at %d: %v; want 4", off, err)
	}
	// The bytes stay readable once the file is renamed and removed.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8)
	if _, err := s.ReadAt(got, 0); err != nil || string(got) != "headtail" {
		t.Fatalf("ReadAt: %q, %v", got, err)
	}
}
