package image

import (
	"fmt"
	"os"
	"testing"
)

// TestMain hides the credentials of whoever runs the tests: every test
// starts from empty credential locations.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "image-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, k := range []string{"HOME", "DOCKER_CONFIG", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		os.Setenv(k, dir)
	}
	os.Unsetenv("REGISTRY_AUTH_FILE")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
