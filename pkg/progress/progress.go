// Package progress tells a person at a terminal how long work is going: a
// status line that rewrites itself while the work runs, and a summary line
// when it is done. It writes nothing at all when it is not enabled, so
// scripts and CI logs get only a command's own output; commands enable it
// only when their error stream is a terminal (IsTerminal).
//
// A nil *Reporter and a nil *Task are valid and do nothing, so library code
// can take an optional reporter without checking it.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal: an *os.File whose descriptor
// is a TTY.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// redrawEvery bounds how often a status line is redrawn; it is a matter of
// display only (the first and the last state are always drawn).
const redrawEvery = 100 * time.Millisecond

// Reporter writes status and summary lines to one writer.
type Reporter struct {
	w  io.Writer
	mu sync.Mutex
	// width is the length of the status line on screen, to blank it.
	width int
}

// New returns a reporter writing to w, or nil (which does nothing) when
// enabled is false.
func New(w io.Writer, enabled bool) *Reporter {
	if !enabled || w == nil {
		return nil
	}
	return &Reporter{w: w}
}

// Printf writes one summary line (a line break is added), after blanking
// any status line.
func (r *Reporter) Printf(format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLocked()
	fmt.Fprintf(r.w, format, args...)
	fmt.Fprintln(r.w)
}

func (r *Reporter) clearLocked() {
	if r.width > 0 {
		fmt.Fprintf(r.w, "\r%s\r", strings.Repeat(" ", r.width))
		r.width = 0
	}
}

func (r *Reporter) drawLocked(line string) {
	pad := ""
	if n := r.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(r.w, "\r%s%s", line, pad)
	r.width = len(line)
}

// Task is one piece of counted work, such as pulling N images.
type Task struct {
	r     *Reporter
	label string
	total int
	done  int
	last  time.Time
}

// Start begins a task of total steps (0 when the total is unknown) and
// draws its status line.
func (r *Reporter) Start(label string, total int) *Task {
	if r == nil {
		return nil
	}
	t := &Task{r: r, label: label, total: total}
	r.mu.Lock()
	t.drawLocked(time.Now())
	r.mu.Unlock()
	return t
}

// Add counts n more steps done; safe for concurrent use.
func (t *Task) Add(n int) {
	if t == nil {
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.done += n
	if now := time.Now(); now.Sub(t.last) >= redrawEvery || t.done == t.total {
		t.drawLocked(now)
	}
}

func (t *Task) drawLocked(now time.Time) {
	t.last = now
	if t.total > 0 {
		t.r.drawLocked(fmt.Sprintf("%s: %d/%d", t.label, t.done, t.total))
	} else {
		t.r.drawLocked(fmt.Sprintf("%s: %d", t.label, t.done))
	}
}

// Done blanks the task's status line and, when summary is not empty, writes
// it as a line of its own.
func (t *Task) Done(summary string) {
	if t == nil {
		return
	}
	t.r.mu.Lock()
	t.r.clearLocked()
	t.r.mu.Unlock()
	if summary != "" {
		t.r.Printf("%s", summary)
	}
}
