package httpserver

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fastopm/fastopm/pkg/cache"
)

// catalogd's routes, with its behaviour (operator-controller,
// internal/catalogd/server/handlers.go):
//
//   - /api/v1/all is http.ServeContent over the JSON lines: Content-Type
//     application/jsonl, Last-Modified, If-Modified-Since (304),
//     If-Unmodified-Since (412), Range (206, 416), HEAD.
//   - /api/v1/metas refuses any parameter other than schema, package and
//     name (400), sets Last-Modified, answers the conditional headers as
//     ServeContent does, then streams the whole catalog when no parameter
//     is set, else the matching lines in catalog order. No Range, and no
//     Content-Length for a large answer (it is streamed).
//
// Last-Modified is the snapshot's time: a saved cache's file time (an
// image's cache: when the image was built), or the start of the process
// for a cold start, as catalogd's is when it unpacked the catalog.

const jsonlType = "application/jsonl"

func (s *Server) all(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Content-Type", jsonlType)
	http.ServeContent(s.idle(w), r, "", s.snap.Modified, s.lines.All())
}

func (s *Server) metas(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for p := range q {
		if p != "schema" && p != "package" && p != "name" {
			http.Error(w, "400 Bad Request", http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("Last-Modified", s.snap.Modified.UTC().Format(http.TimeFormat))
	if done := checkPreconditions(w, r, s.snap.Modified); done {
		return
	}
	schema, pkg, name := q.Get("schema"), q.Get("package"), q.Get("name")
	w.Header().Add("Content-Type", jsonlType)
	if r.Method == http.MethodHead {
		return
	}
	var spans []cache.Span
	if schema == "" && pkg == "" && name == "" {
		spans = []cache.Span{{Off: 0, N: s.lines.Size()}}
	} else {
		spans = s.lines.Spans(s.lines.Select(schema, pkg, name))
	}
	if err := copySpans(s.idle(w), s.lines, spans); err != nil {
		s.log.Debug("metas answer cut short", "error", err)
	}
}

// copyBuffers are the buffers of copySpans.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copySpans writes the spans of the lines to w.
func copySpans(w io.Writer, l *cache.Lines, spans []cache.Span) error {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for _, sp := range spans {
		for done := int64(0); done < sp.N; {
			chunk := buf[:min(int64(len(buf)), sp.N-done)]
			n, err := l.ReadAt(chunk, sp.Off+done)
			if n < len(chunk) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			done += int64(n)
		}
	}
	return nil
}

// idle makes every write of w move the connection's write deadline
// IdleWrite ahead: a client that stops reading is cut off after that long,
// while a slow one that keeps reading may take as long as it needs.
func (s *Server) idle(w http.ResponseWriter) http.ResponseWriter {
	return &idleWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: s.opts.IdleWrite}
}

type idleWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *idleWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) // not every writer has one (tests)
	return w.ResponseWriter.Write(p)
}

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// checkPreconditions answers the conditional headers of a request for a
// resource last modified at modtime, following RFC 9110 section 13.2.2 as
// http.ServeContent does (the resource has no entity tag). It reports
// whether the answer (304 or 412) is written.
func checkPreconditions(w http.ResponseWriter, r *http.Request, modtime time.Time) bool {
	modtime = modtime.Truncate(time.Second) // Last-Modified has no sub-second part
	// If-Match, else If-Unmodified-Since.
	if im := r.Header.Get("If-Match"); im != "" {
		if strings.TrimSpace(im) != "*" {
			w.WriteHeader(http.StatusPreconditionFailed)
			return true
		}
	} else if ius := r.Header.Get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && modtime.After(t) {
			w.WriteHeader(http.StatusPreconditionFailed)
			return true
		}
	}
	// If-None-Match, else If-Modified-Since.
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if strings.TrimSpace(inm) == "*" {
			writeNotModified(w)
			return true
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !modtime.After(t) {
			writeNotModified(w)
			return true
		}
	}
	return false
}

// writeNotModified writes a 304 without the representation's headers.
func writeNotModified(w http.ResponseWriter) {
	h := w.Header()
	delete(h, "Content-Type")
	delete(h, "Content-Length")
	delete(h, "Content-Encoding")
	if h.Get("Etag") != "" {
		delete(h, "Last-Modified")
	}
	w.WriteHeader(http.StatusNotModified)
}
