package cli

import (
	"errors"
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
