package httpapi

import (
	"net/url"
	"strings"
	"testing"
)

// TestCardLinks_AsPageLink: the per-card links made from one encoding of
// the rest of the query are byte for byte pageLink's, for keys that sort
// before and after "card", a card already in the query, empty values and
// cards that need escaping.
func TestCardLinks_AsPageLink(t *testing.T) {
	queries := []string{
		"",
		"workload=lora-7b",
		"workload=lora-7b&card=L40S&range=7d",
		"available=any&currency=EUR&max_gpus=&mode=spot&sort=tps&order=desc",
		"provider=vast,runpod&exclude_provider=&region=US&min_gpu_memory=48",
		"a=1&card=x&cardz=2&car=3",
	}
	cards := []string{"RTX-4090", "H100-SXM", "A100 80GB", "x&y=z", "é/?#", ""}
	for _, raw := range queries {
		q, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/offers"} {
			links := cardLinks(path, q, "sort", "cost")
			for _, c := range cards {
				want := pageLink(path, q, "sort", "cost", "card", c)
				if got := links(c); got != want {
					t.Errorf("query %q, card %q: %s, pageLink %s", raw, c, got, want)
				}
				if c != "" && !strings.Contains(links(c), "card="+url.QueryEscape(c)) {
					t.Errorf("card %q not in %s", c, links(c))
				}
			}
		}
	}
}

// TestBestRowsHTML_EscapesEveryCell: the ranking rows are written without
// html/template, so each scraped text must come out escaped, in cells and
// in attributes alike.
func TestBestRowsHTML_EscapesEveryCell(t *testing.T) {
	evil := `<script>alert("x")</script>&'`
	r := bestRow{Rank: 1, Card: evil, ChartLink: evil, OffersLink: evil, Cost: evil, UnitPrice: evil, Price: evil,
		TokensPerSecond: evil, PerGPU: evil, Source: evil, Provider: evil + "2", Unit: evil, Origin: evil, Precision: evil,
		Mode: "spot", Bid: true, Region: evil, OfferID: evil, Available: "yes", Stock: evil}
	out := string(bestRowsHTML([]bestRow{r}))
	if strings.Contains(out, "<script>") || strings.Contains(out, `"x"`) || strings.Contains(out, "&'") {
		t.Fatalf("unescaped text in %s", out)
	}
	// Every cell and attribute carries it: Card three times (data-card,
	// link text, title), Origin twice (class, text), the two links, the five
	// numbers, Source, Provider, Unit, Precision, Region, OfferID and Stock
	// once each: 3 + 2 + 2 + 5 + 7 = 19.
	if n := strings.Count(out, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;"); n != 19 {
		t.Errorf("%d escaped copies, want 19: %s", n, out)
	}
	if !strings.Contains(out, "spot (bid)") || !strings.Contains(out, "<td>1</td>") {
		t.Errorf("plain cells missing: %s", out)
	}
}
