package httpserver

import (
	"errors"
	"net/http"
	"runtime"
	"time"
)

// The questions that compute (an install resolution, an upgrade path with
// its CRD comparisons, an OLM v1 resolution) run at most workers at a
// time, each within the route's budget (Options.Budget) and the size
// limit of its problem: the server's memory stays bounded however many
// ask, and the CPU is shared among few, so that an easy question waits at
// most for a worker, never for a hard question to end (each has its own
// context and nothing is locked while it computes). The other routes
// (catalogd's, the package list, health, metrics) never wait for one.

// workers is how many questions compute at once: four per CPU, as a
// question often waits for its client or a disk read.
func workers() int { return 4 * runtime.GOMAXPROCS(0) }

// startWork waits for a worker for the request: it returns the function
// that frees it, or false when the request ended first (the client gone:
// nothing is written) or when no worker was free within the budget (503,
// with Retry-After).
func (s *Server) startWork(w http.ResponseWriter, r *http.Request) (done func(), ok bool) {
	select {
	case s.work <- struct{}{}:
		return func() { <-s.work }, true
	default:
	}
	t := time.NewTimer(s.opts.Budget)
	defer t.Stop()
	select {
	case s.work <- struct{}{}:
		return func() { <-s.work }, true
	case <-r.Context().Done():
		return nil, false
	case <-t.C:
		w.Header().Set("Retry-After", retryAfter)
		jsonError(w, r, http.StatusServiceUnavailable, "the server is busy: no worker was free within %v", s.opts.Budget)
		return nil, false
	}
}

// errBudget ends a question's context when its budget is spent.
var errBudget = errors.New("the question's budget is spent")
