package httpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStartWork: a request that finds every worker busy waits for one
// within the budget, then is 503 with Retry-After; one whose client goes
// away while it waits writes nothing; a free worker is taken at once.
func TestStartWork(t *testing.T) {
	s := &Server{opts: Options{Budget: time.Millisecond}, work: make(chan struct{}, 1)}
	r := httptest.NewRequest("GET", "/api/v1/install?package=p", nil)
	w := httptest.NewRecorder()
	done, ok := s.startWork(w, r)
	if !ok {
		t.Fatal("a free worker was not taken")
	}
	// Every worker busy: 503 once the budget is spent.
	w = httptest.NewRecorder()
	if _, ok := s.startWork(w, r); ok || w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != retryAfter ||
		!strings.Contains(w.Body.String(), "the server is busy") {
		t.Errorf("busy: %v %d %q %s", ok, w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	// The client gone while waiting: nothing written.
	s.opts.Budget = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = httptest.NewRecorder()
	if _, ok := s.startWork(w, r.WithContext(ctx)); ok || w.Body.Len() != 0 {
		t.Errorf("gone: %v %d %s", ok, w.Code, w.Body)
	}
	done()
	if done, ok := s.startWork(httptest.NewRecorder(), r); !ok {
		t.Error("a freed worker was not taken")
	} else {
		done()
	}
}
