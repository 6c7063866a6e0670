package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pricewatch/pricewatch/scrapers"
)

// progress shows long downloads while `scrape` runs: on a terminal one
// status line redrawn in place; otherwise a plain line per running source
// every interval, so logs stay readable.
type progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration

	mu    sync.Mutex
	state map[string]scrapers.Progress
	done  map[string]bool
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, tty: isTerminal(w), state: map[string]scrapers.Progress{}, done: map[string]bool{}, stop: make(chan struct{})}
	p.interval = 10 * time.Second
	if p.tty {
		p.interval = 200 * time.Millisecond
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// update is the pipeline's OnProgress callback.
func (p *progress) update(pr scrapers.Progress) {
	p.mu.Lock()
	p.state[pr.Source] = pr
	p.mu.Unlock()
}

func (p *progress) finished(source string) {
	p.mu.Lock()
	p.done[source] = true
	p.mu.Unlock()
}

func (p *progress) start() {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				if p.tty {
					fmt.Fprint(p.w, "\r\033[K")
				}
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
}

func (p *progress) close() {
	close(p.stop)
	p.wg.Wait()
}

func (p *progress) draw() {
	p.mu.Lock()
	var parts []string
	for name, pr := range p.state {
		if p.done[name] || pr.Bytes == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s, %d offers", name, humanBytes(pr.Bytes), pr.Offers))
	}
	p.mu.Unlock()
	sort.Strings(parts)
	if len(parts) == 0 {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", strings.Join(parts, " | "))
		return
	}
	for _, s := range parts {
		fmt.Fprintf(p.w, "progress: %s so far\n", s)
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
