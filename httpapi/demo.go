package httpapi

import (
	"fmt"
	"sync/atomic"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/rank"
)

// DataInfo says how old the data behind an answer is: the ECB rates' own
// date and, in demo mode, what each source's fixture is and when its real
// data was captured. A ranking computed a minute ago from 2024 captures
// and 2022 rates is no news of today's prices.
type DataInfo struct {
	// FXDate is the date the ECB gave its reference rates ("" before any).
	FXDate string `json:"fx_date,omitempty"`
	// Sources (demo mode only) per source: its fixture's capture kind
	// (real, assembled, partial, shape) and the date of its real data
	// ("" for a built fixture or where its provenance states none).
	Sources map[string]SourceData `json:"sources,omitempty"`
}

// SourceData is one source's fixture as fixtures/captures.csv lists it.
type SourceData struct {
	Capture  string `json:"capture"`
	Captured string `json:"captured,omitempty"`
}

// Demo is what a daemon serving fixtures (--demo, --fixtures) tells its
// readers about them.
type Demo struct {
	Sources map[string]SourceData
}

// DemoFixtures describes the bundled fixtures (fixtures/captures.csv).
func DemoFixtures() *Demo {
	d := &Demo{Sources: map[string]SourceData{}}
	for _, s := range fixtures.Sources() {
		d.Sources[s] = SourceData{Capture: fixtures.Capture(s), Captured: fixtures.Captured(s)}
	}
	return d
}

type demoHolder struct{ atomic.Pointer[Demo] }

// SetDemo marks the server as serving fixtures: /v1/best says "demo": true
// with each source's capture, and the dashboard shows a banner. Call it
// before serving: answers are cached per snapshot.
func (s *Server) SetDemo(d *Demo) { s.demo.Store(d) }

// dataInfo is the data's dates for an answer from snap.
func dataInfo(snap *rank.Snapshot, d *Demo) DataInfo {
	var di DataInfo
	if snap != nil && snap.Rates != nil {
		di.FXDate = snap.Rates.Date
	}
	if d != nil {
		di.Sources = d.Sources
	}
	return di
}

// MarkDemo says that r was computed from fixtures.
func (r *BestResponse) MarkDemo(d *Demo) {
	if d != nil {
		r.Demo = true
		r.Data.Sources = d.Sources
	}
}

// DataLine is the one line that dates an answer's data, for the CLI and
// the dashboard: in demo mode that it is one, with how many fixtures are
// illustrative; always the exchange rates' date.
func DataLine(demo bool, di DataInfo) string {
	fx := "no exchange rates yet"
	if di.FXDate != "" {
		fx = "exchange rates of " + di.FXDate
	}
	if !demo {
		return "Data: ECB " + fx
	}
	n := 0
	for _, s := range di.Sources {
		if s.Capture == fixtures.CaptureShape {
			n++
		}
	}
	return fmt.Sprintf("Demo: prices from bundled fixtures (%d of %d illustrative), %s", n, len(di.Sources), fx)
}

// dataNote is what every dashboard page shows of the data's age.
type dataNote struct {
	Demo   bool
	Line   string
	FXDate string
}

func (s *Server) dataNote() dataNote {
	var snap *rank.Snapshot
	if v := s.backend.View(); v != nil {
		snap = v.Snapshot
	}
	d := s.demo.Load()
	di := dataInfo(snap, d)
	return dataNote{Demo: d != nil, Line: DataLine(d != nil, di), FXDate: di.FXDate}
}
