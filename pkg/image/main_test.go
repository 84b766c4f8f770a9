package image

import (
	"fmt"
	"os"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// TestMain hides the credentials of whoever runs the tests: every test
// starts from empty credential locations.
func TestMain(m *testing.M) {
	cleanup, err := testutil.HideCredentialsFromProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
