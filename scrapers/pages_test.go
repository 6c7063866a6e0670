package scrapers_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pricewatch/pricewatch/scrapers"
)

// A paged list is read page by page with the page and size on the URL,
// until a page says it is the last; a list that never ends fails the run
// at the bound, after exactly that many requests.
func TestFetchPages(t *testing.T) {
	var requests atomic.Int32
	endless := false
	srv := server(t, "", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		page, _ := strconv.Atoi(r.URL.Query().Get("p"))
		if r.URL.Query().Get("n") != "2" || r.Header.Get("X-Key") != "k" {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		last := page >= 3 && !endless
		fmt.Fprintf(w, "%d,%d %v", 2*page-1, 2*page, last)
	})
	pages := scrapers.Pages[string]{PageParam: "p", SizeParam: "n", Size: 2, Max: 5,
		Parse: func(body []byte, page, before int) ([]string, bool, error) {
			f := strings.Fields(string(body))
			if before != 2*(page-1) {
				return nil, false, fmt.Errorf("page %d after %d items", page, before)
			}
			return strings.Split(f[0], ","), f[1] == "true", nil
		}}
	hdr := http.Header{"X-Key": {"k"}}
	got, err := scrapers.FetchPages(context.Background(), env(srv.URL+"/data"), "test", hdr, pages)
	if err != nil || strings.Join(got, " ") != "1 2 3 4 5 6" || requests.Load() != 3 {
		t.Fatalf("items %v, %d requests, %v; want 1…6 from 3 pages", got, requests.Load(), err)
	}
	endless = true
	requests.Store(0)
	_, err = scrapers.FetchPages(context.Background(), env(srv.URL+"/data"), "test", hdr, pages)
	if err == nil || !strings.Contains(err.Error(), "page limit reached") || requests.Load() != 5 {
		t.Fatalf("endless list: %v after %d requests; want the page limit after 5", err, requests.Load())
	}
}
