package action

import (
	"os"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// Some tests draw SVG with the opm-graphviz program (testutil.UseGraphviz).
func TestMain(m *testing.M) { os.Exit(testutil.RunWithGraphviz(m)) }
