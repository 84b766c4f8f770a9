package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The drawing program of pkg/graphsvg (cmd/opm-graphviz) is a program of
// its own: tests that draw build it, once per test binary, into a
// temporary directory that RunWithGraphviz removes at the end.

var graphviz struct {
	dir  string
	once sync.Once
	err  error
}

// RunWithGraphviz runs the tests of a package some of whose tests draw
// SVG (UseGraphviz): call it from TestMain, os.Exit(RunWithGraphviz(m)).
func RunWithGraphviz(m *testing.M) int {
	dir, err := os.MkdirTemp("", "opm-graphviz-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	graphviz.dir = dir
	return m.Run()
}

// UseGraphviz builds cmd/opm-graphviz (the first time) and points
// OPM_GRAPHVIZ at it for the rest of the test binary. The package's
// TestMain must use RunWithGraphviz.
func UseGraphviz(t testing.TB) {
	t.Helper()
	graphviz.once.Do(func() {
		if graphviz.dir == "" {
			graphviz.err = fmt.Errorf("UseGraphviz needs TestMain to call testutil.RunWithGraphviz")
			return
		}
		path := filepath.Join(graphviz.dir, "opm-graphviz")
		out, err := exec.Command("go", "build", "-o", path, "github.com/fastopm/fastopm/cmd/opm-graphviz").CombinedOutput()
		if err != nil {
			graphviz.err = fmt.Errorf("build opm-graphviz: %v\n%s", err, out)
			return
		}
		graphviz.err = os.Setenv("OPM_GRAPHVIZ", path)
	})
	if graphviz.err != nil {
		t.Fatal(graphviz.err)
	}
}
