//go:build opm_lean

package action

import (
	"log/slog"
	"time"

	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/server"
)

// httpSide is serve's HTTP side, which the lean opm does not link: its
// command line runs opm-full for --http-addr (see full.go), so these are
// reached only by a caller of the package that did not.
type httpSide struct{}

func newHTTPSide(*server.Options) (*httpSide, error) { return nil, ErrNeedsFull }

func (*httpSide) start(Serve, *cache.Snapshot, *server.Server, *slog.Logger) (*webServer, error) {
	return nil, ErrNeedsFull
}

func (*httpSide) loaded(time.Duration) {}
