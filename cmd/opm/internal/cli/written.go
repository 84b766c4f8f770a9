//go:build !opm_lean

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// stickyWriter remembers the first error writing to w, so that an answer
// that could not be written fails the command even where a write's error
// went unchecked.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// encodeAnswer writes v as a command's JSON answer (jsonEncoder). An
// answer that cannot be encoded or written is an error with exit code
// 2, never that of an answer nobody received (see answerOut).
func encodeAnswer(w io.Writer, v any) error {
	if err := jsonEncoder(w).Encode(v); err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("cannot write the answer as JSON: %w", err)}
	}
	return nil
}

// answerOut gives a command's streams whose Out remembers its first write
// error, and done, which the command defers with its error: when the
// answer could not be written, the command ends with that error and
// code, the exit code of an error. The answer's own exit code (diff
// --check: 1, a violation; query install: 1, not installable) would
// describe an answer nobody received.
func answerOut(s Streams, code int) (Streams, func(*error)) {
	out := &stickyWriter{w: s.Out}
	s.Out = out
	return s, func(err *error) {
		var ur *usageReport
		if out.err == nil || errors.As(*err, &ur) {
			return
		}
		*err = &ExitError{Code: code, Err: out.err}
	}
}

func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	return enc
}
