package graphsvg

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// Without the drawing program the error says how to get it.
func TestNoProgram(t *testing.T) {
	t.Setenv(EnvProgram, "")
	t.Setenv("PATH", t.TempDir())
	if Available() {
		t.Fatal("a drawing program was found")
	}
	_, err := SVG(t.Context(), []byte("digraph g {}"))
	if !errors.Is(err, ErrNoProgram) || !strings.Contains(err.Error(), "make build") {
		t.Errorf("SVG = %v", err)
	}
	t.Setenv(EnvProgram, filepath.Join(t.TempDir(), "missing"))
	if _, err := SVG(t.Context(), []byte("digraph g {}")); err == nil || !strings.Contains(err.Error(), EnvProgram+"=") {
		t.Errorf("SVG with a missing %s = %v", EnvProgram, err)
	}
}

func TestMain(m *testing.M) { os.Exit(testutil.RunWithGraphviz(m)) }

// A drawing past MaxMemory is stopped with ErrTooLarge, whatever the
// caller estimated; within it, it is drawn.
func TestMemoryBound(t *testing.T) {
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skip("no /proc: the memory bound is not enforced here")
	}
	testutil.UseGraphviz(t)
	dot := []byte("digraph g { a -> b; }")
	if svg, err := SVG(t.Context(), dot); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Fatalf("SVG = %.40q, %v", svg, err)
	}
	defer func(m int64) { MaxMemory = m }(MaxMemory)
	MaxMemory = 1 << 20 // the WebAssembly runtime alone is more
	_, err := SVG(t.Context(), dot)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Graphviz used more than 1 MB and was stopped") {
		t.Fatalf("SVG past MaxMemory = %v", err)
	}
}

// The bound is the drawing's own memory, whatever opm's: a process that
// has held more than MaxMemory still draws a small graph (the kernel's
// count of a child, which os/exec starts from opm's memory, counted
// opm's peak too).
func TestMemoryBoundIsTheDrawings(t *testing.T) {
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skip("no /proc: the memory bound is not enforced here")
	}
	testutil.UseGraphviz(t)
	held := make([]byte, 160<<20)
	for i := range held {
		if i%4096 == 0 {
			held[i] = 1
		}
	}
	defer func(m int64) { MaxMemory = m }(MaxMemory)
	MaxMemory = 128 << 20 // the drawing of a -> b takes about 22 MB
	svg, err := SVG(t.Context(), []byte("digraph g { a -> b; }"))
	if err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("SVG = %.40q, %v", svg, err)
	}
	runtime.KeepAlive(held)
}
