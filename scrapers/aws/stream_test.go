package aws_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/scrapers"
	"github.com/pricewatch/pricewatch/scrapers/aws"
)

// synthetic writes a CSV offer file of at least size bytes to w: the real
// preamble and header, then rows built from fixture rows. Most rows are the
// two real non-GPU rows of the Tokyo excerpt; every 997th row is a plain
// Linux on-demand p4d row with its own instance type (so that every one is
// kept), every 991st a Windows p4d row (a trap). It returns how many rows
// the parser must keep.
func synthetic(w io.Writer, size int64) (int, error) {
	tokyo := fixtureLines("aws/ap-northeast-1.csv")
	east := fixtureLines("aws/us-east-1.csv")
	pre := strings.Join(tokyo[:6], "\n") + "\n"
	nonGPU := []string{tokyo[6], tokyo[7]}
	var gpu, windows string
	for _, l := range east {
		if strings.HasPrefix(l, `"H7NGEAC6UEHNTKSJ","JRTCKXETXF"`) {
			gpu = l
		}
		if strings.Contains(l, `"p4d.24xlarge"`) && strings.Contains(l, `"Windows"`) {
			windows = l
		}
	}
	if gpu == "" || windows == "" {
		return 0, fmt.Errorf("fixture rows not found")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	n, _ := bw.WriteString(pre)
	written, kept := int64(n), 0
	for i := 1; written < size; i++ {
		var line string
		switch {
		case i%997 == 0:
			line = strings.ReplaceAll(gpu, "p4d.24xlarge", fmt.Sprintf("p4d.s%dxlarge", i))
			kept++
		case i%991 == 0:
			line = strings.ReplaceAll(windows, "p4d.24xlarge", fmt.Sprintf("p4d.w%dxlarge", i))
		default:
			line = nonGPU[i%2]
		}
		n, err := bw.WriteString(line + "\n")
		written += int64(n)
		if err != nil {
			return kept, err
		}
	}
	return kept, bw.Flush()
}

func fixtureLines(name string) []string {
	b, err := fs.ReadFile(fixtures.FS(), name)
	if err != nil {
		panic(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// syntheticServer serves the fixture region index and, for us-east-1, a
// synthetic CSV or JSON offer file of size bytes generated on the fly
// through an io.Pipe (never held whole, never written to disk). kept
// receives the expected count of each generated file.
func syntheticServer(t testing.TB, size int64, kept chan<- int) *httptest.Server {
	index, err := fs.ReadFile(fixtures.FS(), "aws/region_index.json")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /offers/region_index.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(index)
	})
	for ext, gen := range map[string]func(io.Writer, int64) (int, error){"csv": synthetic, "json": syntheticJSON} {
		mux.HandleFunc("GET /offers/us-east-1/index."+ext, func(w http.ResponseWriter, r *http.Request) {
			pr, pw := io.Pipe()
			go func() {
				n, err := gen(pw, size)
				kept <- n
				pw.CloseWithError(err)
			}()
			io.Copy(w, pr)
			pr.Close()
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func syntheticEnv(srv *httptest.Server) *scrapers.Env {
	return &scrapers.Env{Name: "aws", Settings: scrapers.Settings{
		URL: srv.URL + "/offers/region_index.json", Timeout: 10 * time.Minute, MaxBodyMB: 4096,
	}}
}

// peakHeap samples the heap (live and not yet swept objects) every
// millisecond until the returned stop is called; stop returns the peak in MB.
func peakHeap() (stop func() float64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak {
				peak = v
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		<-finished
		return float64(peak) / (1 << 20)
	}
}

// streamSynthetic runs the aws scraper (region index, then env.Stream of
// the region file into the streaming parser) against a synthetic file.
func streamSynthetic(t testing.TB, size int64, format string) (got, want int, peakMB float64) {
	kept := make(chan int, 1)
	srv := syntheticServer(t, size, kept)
	s := &aws.Scraper{Regions: []string{"us-east-1"}, Format: format}
	runtime.GC()
	stop := peakHeap()
	res, err := s.Scrape(t.Context(), syntheticEnv(srv))
	peakMB = stop()
	if err != nil {
		t.Fatalf("scrape of a %d MB synthetic file: %v", size>>20, err)
	}
	return len(res.Observations), <-kept, peakMB
}

// The parser keeps exactly the GPU rows of a 50 MB file streamed through
// env.Stream, in either format, and the heap stays small.
func TestScrape_Synthetic50MB(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 2 × 50 MB")
	}
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			got, want, peak := streamSynthetic(t, 50<<20, format)
			if want < 30 || got != want {
				t.Errorf("kept %d GPU rows, want exactly %d", got, want)
			}
			if peak >= 100 {
				t.Errorf("peak heap %.1f MB, want < 100 MB", peak)
			}
			t.Logf("50 MB %s: %d GPU rows kept, peak heap %.1f MB", format, got, peak)
		})
	}
}

// BenchmarkStreamCSV_300MB streams a ≥300 MB synthetic CSV offer file,
// generated on the fly, from a loopback server through colly and env.Stream
// into ParseCSV, and reports the peak heap, which must stay under 100 MB.
func BenchmarkStreamCSV_300MB(b *testing.B) {
	const size = 300 << 20
	b.SetBytes(size)
	var peak float64
	for b.Loop() {
		got, want, p := streamSynthetic(b, size, "csv")
		if got != want {
			b.Fatalf("kept %d GPU rows, want %d", got, want)
		}
		peak = max(peak, p)
	}
	b.ReportMetric(peak, "peak-heap-MB")
	if peak >= 100 {
		b.Errorf("peak heap %.1f MB, want < 100 MB", peak)
	}
}

// syntheticJSON writes a JSON offer file of at least size bytes: products
// (every 997th a plain Linux p4d, the rest copies of the real Capacity
// Block product under non-GPU instance types), then their OnDemand terms.
func syntheticJSON(w io.Writer, size int64) (int, error) {
	b, err := fs.ReadFile(fixtures.FS(), "aws/us-east-1.json")
	if err != nil {
		return 0, err
	}
	// The real products, one line each, and one term, as templates.
	var doc struct {
		Products map[string]any
		Terms    map[string]map[string]any
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return 0, err
	}
	prod, _ := json.Marshal(doc.Products["H7NGEAC6UEHNTKSJ"])
	term, _ := json.Marshal(doc.Terms["OnDemand"]["H7NGEAC6UEHNTKSJ"])
	bw := bufio.NewWriterSize(w, 64<<10)
	var written int64
	write := func(s string) {
		n, _ := bw.WriteString(s)
		written += int64(n)
	}
	write(`{"formatVersion":"v1.0","offerCode":"AmazonEC2","version":"synthetic","products":{`)
	n, kept := 0, 0
	// products take ~70% of the size, terms the rest
	for i := 1; written < size*7/10; i++ {
		sku := fmt.Sprintf("SKU%013d", i)
		p := strings.ReplaceAll(string(prod), "H7NGEAC6UEHNTKSJ", sku)
		if i%997 == 0 {
			p = strings.ReplaceAll(p, "p4d.24xlarge", fmt.Sprintf("p4d.s%dxlarge", i))
			kept++
		} else {
			p = strings.ReplaceAll(p, "p4d.24xlarge", "m5.large")
			p = strings.ReplaceAll(p, `"gpu":"8"`, `"gpu":"NA"`) // a CPU product states no GPUs
		}
		if i > 1 {
			write(",")
		}
		write(`"` + sku + `":` + p)
		n = i
	}
	write(`},"terms":{"OnDemand":{`)
	for i := 1; i <= n; i++ {
		sku := fmt.Sprintf("SKU%013d", i)
		if i > 1 {
			write(",")
		}
		write(`"` + sku + `":` + strings.ReplaceAll(string(term), "H7NGEAC6UEHNTKSJ", sku))
	}
	write(`}},"attributesList":{}}`)
	return kept, bw.Flush()
}

// BenchmarkStreamJSON_300MB is BenchmarkStreamCSV_300MB for the JSON
// format (products, then terms) into ParseJSON.
func BenchmarkStreamJSON_300MB(b *testing.B) {
	const size = 300 << 20
	b.SetBytes(size)
	var peak float64
	for b.Loop() {
		got, want, p := streamSynthetic(b, size, "json")
		if got != want {
			b.Fatalf("kept %d GPU products, want %d", got, want)
		}
		peak = max(peak, p)
	}
	b.ReportMetric(peak, "peak-heap-MB")
	if peak >= 100 {
		b.Errorf("peak heap %.1f MB, want < 100 MB", peak)
	}
}
