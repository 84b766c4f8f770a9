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
	content, err := s.lines.OpenAll()
	if err != nil {
		s.log.Error("cannot open the catalog's lines", "error", err)
		http.Error(w, "500 Internal Server Error", http.StatusInternalServerError)
		return
	}
	defer content.Close()
	w.Header().Add("Content-Type", jsonlType)
	iw := s.idle(w).(*idleWriter)
	// Without compression the bytes may go to the connection as they are,
	// with sendfile(2); gzhttp compresses only for a client that asks.
	iw.direct = noEncoding(r)
	http.ServeContent(iw, r, "", s.snap.Modified, content)
}

// noEncoding reports whether the client accepts no content coding, so
// that the response is surely sent as it is.
func noEncoding(r *http.Request) bool {
	ae := strings.TrimSpace(strings.Join(r.Header.Values("Accept-Encoding"), ","))
	return ae == "" || ae == "identity"
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
	// direct: nothing between the handler and the connection changes the
	// bytes (no compression), so ReadFrom may reach the connection's own.
	direct bool
}

func (w *idleWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) // not every writer has one (tests)
	return w.ResponseWriter.Write(p)
}

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// chunker is a file section that can be sent with sendfile(2) a bounded
// chunk at a time (cache.Lines.OpenAll).
type chunker interface {
	SendChunk(n int64) (*io.LimitedReader, func() error)
}

// sendChunk is how much sendfile sends between two moves of the deadline.
const sendChunk = 4 << 20

// ReadFrom lets http.ServeContent's copy reach the connection's sendfile
// when the content is a file section (and the response is not
// compressed), moving the deadline forward between chunks.
func (w *idleWriter) ReadFrom(src io.Reader) (int64, error) {
	var rf io.ReaderFrom
	ok := false
	if w.direct {
		// Through the wrappers that only watch (metrics, gzhttp's
		// pass-through) to the connection's response.
		for cur := w.ResponseWriter; cur != nil && !ok; {
			if rf, ok = cur.(io.ReaderFrom); ok {
				break
			}
			u, can := cur.(interface{ Unwrap() http.ResponseWriter })
			if !can {
				break
			}
			cur = u.Unwrap()
		}
	}
	lr, limited := src.(*io.LimitedReader)
	var c chunker
	if limited {
		c, _ = lr.R.(chunker)
	}
	if !ok || c == nil {
		return io.Copy(writerOnly{w}, src)
	}
	var total int64
	for lr.N > 0 {
		chunk, done := c.SendChunk(min(lr.N, sendChunk))
		if chunk.N == 0 {
			break
		}
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
		n, err := rf.ReadFrom(chunk)
		total += n
		lr.N -= n
		if derr := done(); err == nil {
			err = derr
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, io.ErrUnexpectedEOF
		}
	}
	return total, nil
}

// writerOnly hides ReadFrom, so that io.Copy writes through Write.
type writerOnly struct{ io.Writer }

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
