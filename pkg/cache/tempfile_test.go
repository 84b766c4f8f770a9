//go:build unix && !aix && !solaris

package cache

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
)

// TestMain runs the tests, or, in the processes TestDeadBuildRemoved
// starts (CACHE_TEST_DIR set), creates a build file in that directory,
// prints its name and waits to be killed: it lives until its standard
// input ends, which the test holds open (and which ends with the test
// process, should that die first), however long the test takes.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CACHE_TEST_DIR"); dir != "" {
		f, err := createBuildFile(dir)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(filepath.Base(f.Name()) + "\n")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDeadBuildRemoved: the file of a build killed with SIGKILL is removed
// by the next build; the file of a running build is not.
func TestDeadBuildRemoved(t *testing.T) {
	dir := t.TempDir()
	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "CACHE_TEST_DIR="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		in, err := cmd.StdinPipe() // the helper lives while it is open
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); in.Close(); cmd.Wait() })
		buf := make([]byte, 256)
		n, _ := out.Read(buf)
		name := strings.TrimSpace(string(buf[:n]))
		if !strings.HasPrefix(name, tempPrefix) {
			t.Fatalf("helper printed %q", name)
		}
		return cmd, name
	}
	dead, deadName := start()
	if err := dead.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	dead.Wait()
	_, liveName := start()
	// A file that was never locked, as a build killed between creating
	// and locking it leaves.
	if err := os.WriteFile(filepath.Join(dir, tempPrefix+"unlocked"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	sharedBundle, _ := shapecat.Lookup("shared-bundle")
	snap, err := buildDir(t.Context(), sharedBundle.FS(3), dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if want := []string{FileName, liveName}; !slices.Equal(names, sortedCopy(want)) {
		t.Errorf("cache directory holds %q; want %q (dead build %q removed)", names, sortedCopy(want), deadName)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
