package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/scrapers"
)

func TestProgress_PlainLinesWhenNotATerminal(t *testing.T) {
	var out syncBuffer
	p := newProgress(&out)
	if p.tty {
		t.Fatal("a buffer is not a terminal")
	}
	p.interval = 10 * time.Millisecond
	p.start()
	p.update(scrapers.Progress{Source: "aws", Bytes: 150 << 20, Offers: 1234})
	p.update(scrapers.Progress{Source: "vast", Bytes: 2048, Offers: 7})
	time.Sleep(50 * time.Millisecond)
	p.finished("vast")
	p.close()
	s := out.String()
	if !strings.Contains(s, "progress: aws 150.0 MB, 1234 offers so far\n") || !strings.Contains(s, "progress: vast 2 kB, 7 offers so far") {
		t.Errorf("progress output:\n%s", s)
	}
	if strings.Contains(s, "\r") || strings.Contains(s, "\033") {
		t.Error("terminal control codes in plain output")
	}
}
