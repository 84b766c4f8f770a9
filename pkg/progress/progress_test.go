package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestDisabledWritesNothing(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, false)
	task := r.Start("pulling", 3)
	task.Add(1)
	task.Done("pulled 3 images")
	r.Printf("kept %d packages", 4)
	if b.Len() != 0 {
		t.Fatalf("a disabled reporter wrote %q", b.String())
	}
}

func TestTaskDrawsFirstAndLastStateAndSummary(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, true)
	task := r.Start("pulling bundle images", 3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); task.Add(1) }()
	}
	wg.Wait()
	task.Done("pulled 3 bundle images")
	out := b.String()
	for _, want := range []string{"\rpulling bundle images: 0/3", "\rpulling bundle images: 3/3", "pulled 3 bundle images\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	// The status line is blanked before the summary: the summary starts a
	// line of its own.
	if i := strings.LastIndex(out, "\r"); !strings.HasPrefix(out[i+1:], "pulled 3") {
		t.Errorf("summary does not follow a carriage return: %q", out)
	}
}

func TestUnknownTotal(t *testing.T) {
	var b bytes.Buffer
	task := New(&b, true).Start("reading", 0)
	task.Add(5)
	task.Done("")
	if !strings.Contains(b.String(), "reading: 0") || strings.Contains(b.String(), "/") {
		t.Errorf("unexpected output %q", b.String())
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is not a terminal")
	}
}
