package action

import (
	"fmt"
	"sync"
	"time"

	"github.com/fastopm/fastopm/pkg/progress"
)

// PullProgress counts the images a Resolver pulls on a status line
// ("pulling images: 12") and sums them up once the work is done ("pulled
// 30 images in 2.4s"). A nil one does nothing.
type PullProgress struct {
	r      *progress.Reporter
	mu     sync.Mutex
	task   *progress.Task
	n      int
	start  time.Time
	failed int
}

// NewPullProgress reports on r; nil when r is nil (not a terminal).
func NewPullProgress(r *progress.Reporter) *PullProgress {
	if r == nil {
		return nil
	}
	return &PullProgress{r: r}
}

// begin notes that an image pull starts.
func (p *PullProgress) begin() {
	if p == nil {
		return
	}
	r := p.r
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.task == nil {
		p.start = time.Now()
		p.task = r.Start("pulling images", 0)
	}
}

// end notes that a pull ended.
func (p *PullProgress) end(err error) {
	if p == nil {
		return
	}
	p.mu.Lock()
	t := p.task
	if t != nil {
		if err != nil {
			p.failed++
		} else {
			p.n++
		}
	}
	p.mu.Unlock()
	if err == nil {
		t.Add(1)
	}
}

// Finish blanks the status line and writes the summary, once, if an
// image was pulled.
func (p *PullProgress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	t, n, start := p.task, p.n, p.start
	p.task = nil
	p.mu.Unlock()
	if t == nil {
		return
	}
	noun := "images"
	if n == 1 {
		noun = "image"
	}
	t.Done(fmt.Sprintf("pulled %d %s in %v", n, noun, time.Since(start).Round(10*time.Millisecond)))
}
