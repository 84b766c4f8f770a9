package graphsvg

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
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
