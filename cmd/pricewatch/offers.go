package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/httpapi"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/pipeline"
	"github.com/pricewatch/pricewatch/rank"
)

func init() {
	helpText["offers"] = [3]string{"offers [CARD[:N]] [--currency CUR] [--max-price P] [--gpus N] [--vendor nvidia|amd|intel] [--min-total-gpu-memory GB] [--region NAME]… [--mode M] [--available A] [--provider P] [--exclude-provider P] [--country CC] [--json] [--db FILE | --demo] [--addr HOST:PORT]",
		"List every offer of a card, cheapest per GPU-hour first in one currency (the offer's own price beside it), as `sky show-gpus CARD:N` does: provider, source, region, mode (bids as bid), the rental unit, vCPUs, RAM, price per GPU-hour and per unit, availability and the page to rent it. CARD is a canonical id, a model (H100: the PCIe and SXM cards) or an alias, any case; N the exact GPUs of a rental; without a card, a filter is needed (--vendor amd). Regions are exact names (Vast's \"Texas, US\"): repeat --region or separate them with |. From the database, or from the running daemon's GET /v1/offers.",
		"pricewatch offers --demo H100:8 --max-price 3"}
}

// regionFlags is a repeatable --region: each value passed on as a region
// parameter (which may itself hold several names separated by |).
type regionFlags []string

func (r *regionFlags) String() string { return strings.Join(*r, "|") }

func (r *regionFlags) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// maxOfferPages bounds the pages asked of a daemon (10000 offers each).
const maxOfferPages = 100

func runOffers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("offers", stdout, stderr)
	var c common
	c.register(fs, false)
	currency := fs.String("currency", "", "price in this currency: USD, CNY or EUR (default: ranking.base_currency); the offer's own price is shown beside")
	maxPrice := fs.String("max-price", "", "only offers costing at most this per GPU-hour, in --currency")
	gpus := fs.String("gpus", "", "only rentals of exactly this many GPUs (as CARD:N)")
	vendor := fs.String("vendor", "", "only cards of this vendor: nvidia, amd or intel")
	minTotal := fs.String("min-total-gpu-memory", "", "only rentals with at least this much GPU memory in all, GB")
	var regions regionFlags
	fs.Var(&regions, "region", "only this region, by its exact name (repeat the flag, or separate names with |)")
	mode := fs.String("mode", "", "one billing mode: ondemand, spot, …")
	avail := fs.String("available", "", "yes, no or unknown (default: any)")
	provider := fs.String("provider", "", "only these providers, comma-separated")
	exclude := fs.String("exclude-provider", "", "leave out these providers, comma-separated")
	country := fs.String("country", "", "only offers in these countries, ISO 3166-1 alpha-2, comma-separated (US,DE)")
	asJSON := fs.Bool("json", false, "print the JSON the /v1/offers endpoint answers (every page in one)")
	addr := fs.String("addr", "", "when a running daemon holds the database, ask it at this address (default: config server.addr)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	filtered := *maxPrice != "" || *gpus != "" || *vendor != "" || *minTotal != "" || len(regions) > 0 || *provider != "" || *country != ""
	var card, n, asked string
	switch {
	case len(pos) > 1:
		return usageError{fmt.Sprintf("offers takes one CARD[:N], got %q", pos)}
	case len(pos) == 1:
		asked = pos[0]
		if card, n, err = parseCardCount(asked); err != nil {
			return err
		}
	case !filtered:
		return usageError{"offers needs a card, e.g. `pricewatch offers H100:8` (every H100 rental of 8 GPUs), or a filter such as --vendor amd or --max-price 2"}
	default:
		asked = "every card"
	}
	if n != "" && *gpus != "" && n != *gpus {
		return usageError{fmt.Sprintf("%s asks for %s GPUs, --gpus for %s", asked, n, *gpus)}
	}
	if n == "" {
		n = *gpus
	}
	q := url.Values{"kind": {string(pricewatch.KindOffer)}, "limit": {"10000"}}
	for k, v := range map[string]string{"card": card, "gpus": n, "currency": *currency, "max_price": *maxPrice, "vendor": *vendor,
		"min_total_gpu_memory": *minTotal, "mode": *mode, "available": *avail, "provider": *provider,
		"exclude_provider": *exclude, "country": *country} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for _, r := range regions {
		q.Add("region", r)
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var resp *httpapi.OffersResponse
	err = readOrAsk(ctx, cfg, *addr, stderr, func(p *pipeline.Pipeline) error {
		snap := p.View().Snapshot
		oq, err := httpapi.ParseOffersQuery(q, snap, normalize.DefaultCatalog(), func(string) bool { return true })
		if err != nil {
			return usageError{err.Error()}
		}
		if snap.OfferCount() == 0 {
			fmt.Fprintf(stderr, "pricewatch: %s holds no offers yet; run `pricewatch scrape` (or serve) first\n", cfg.DB)
		}
		oq.Limit = max(snap.OfferCount(), 1)    // every offer, one page
		resp, err = httpapi.Offers(snap, oq, p) // the 7-day availability too, as the daemon answers
		return err
	}, func(addr string) error {
		var err error
		resp, err = fetchOffers(ctx, addr, q)
		return err
	})
	if err != nil {
		return err
	}
	return printAnswer(stdout, *asJSON, resp, func() { printOffers(stdout, asked, resp) })
}

// parseCardCount splits CARD[:N] ("H100:8").
func parseCardCount(arg string) (card, n string, err error) {
	card, n, found := strings.Cut(strings.TrimSpace(arg), ":")
	if card == "" {
		return "", "", usageError{fmt.Sprintf("%q names no card (CARD[:N], e.g. H100:8)", arg)}
	}
	if found {
		if v, err := strconv.Atoi(n); err != nil || v < 1 || v > rank.MaxMaxGPUs {
			return "", "", usageError{fmt.Sprintf("%q: the GPU count after : must be an integer within 1..%d", arg, rank.MaxMaxGPUs)}
		}
	}
	return card, n, nil
}

// fetchOffers asks the daemon for every page of the listing.
func fetchOffers(ctx context.Context, addr string, q url.Values) (*httpapi.OffersResponse, error) {
	var all *httpapi.OffersResponse
	for range maxOfferPages {
		var page httpapi.OffersResponse
		if err := daemonJSON(ctx, http.MethodGet, addr, "/v1/offers?"+q.Encode(), "", nil, &page); err != nil {
			return nil, err
		}
		if all == nil {
			all = &page
		} else {
			all.Offers = append(all.Offers, page.Offers...)
		}
		if page.Next == "" {
			all.Count, all.Next = len(all.Offers), ""
			return all, nil
		}
		q.Set("cursor", page.Next)
	}
	return nil, fmt.Errorf("more than %d pages of offers", maxOfferPages)
}

func printOffers(w io.Writer, asked string, r *httpapi.OffersResponse) {
	cards := ""
	if len(r.Cards) > 0 {
		cards = " (" + strings.Join(r.Cards, ", ") + ")"
	}
	fmt.Fprintf(w, "%s: %s%s, cheapest per GPU-hour first, prices in %s (the offer's own beside, where it differs)\n",
		asked, plural(len(r.Offers), "offer"), cards, r.Currency)
	if len(r.Offers) == 0 {
		fmt.Fprintln(w, "(no offer matches)")
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CARD\tPROVIDER\tSOURCE\tREGION\tMODE\tUNIT\tVCPUS\tRAM GB\t%s/GPU-H\t%s/UNIT-H\tAVAILABLE\tRENT\n", r.Currency, r.Currency)
	for _, o := range r.Offers {
		perGPU, perUnit := "-", "-"
		if cv := o.Converted; cv != nil {
			perGPU = priceBeside(cv.PricePerGPUHour, o.PricePerGPUHour, r.Currency, o.Currency)
			perUnit = priceBeside(cv.UnitPricePerHour, cv.OfferUnitPricePerHour, r.Currency, o.Currency)
		} else {
			perGPU = o.Currency + " " + money(o.PricePerGPUHour) + " (no rate)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.Card, o.Provider, o.Source, dash(o.Region),
			offerMode(o.Offer), offerUnit(o), offerQty(o.VCPUs), offerQty(o.RAMGB), perGPU, perUnit, offerAvailability(o), dash(o.RentURL))
	}
	tw.Flush()
}

// priceBeside writes a converted price with the offer's own beside it
// when its currency is another: "0.290 (CNY 1.98)".
func priceBeside(v, own float64, cur, ownCur string) string {
	if strings.EqualFold(cur, ownCur) {
		return money(v)
	}
	return fmt.Sprintf("%s (%s %s)", money(v), ownCur, money(own))
}

// offerMode is the billing mode, bids as "bid".
func offerMode(o pricewatch.Offer) string {
	if o.Bid {
		return rank.ModeBid
	}
	return string(o.Mode)
}

// offerUnit says what one rental is: "8 GPUs fixed", "8 GPUs per-GPU
// (1-8)", "0.5 GPU share".
func offerUnit(o httpapi.OfferStatus) string {
	n := 1
	if o.Converted != nil {
		n = o.Converted.UnitGPUs
	}
	switch {
	case o.GPUFraction > 0 && o.GPUFraction < 1:
		return strconv.FormatFloat(o.GPUFraction, 'g', 2, 64) + " GPU share"
	case o.RentUnit == pricewatch.RentPerGPU:
		return plural(n, "GPU") + " per-GPU (" + countsLabel(o.GPUCounts) + ")"
	case o.RentUnit == pricewatch.RentFixed:
		return plural(n, "GPU") + " fixed"
	}
	return plural(max(o.GPUs, 1), "GPU")
}

// offerQty writes a stated quantity (vCPUs, GB) for people: whole from 10 up,
// else with one decimal at most; "-" when not stated. A vCPU count that
// is a share of a machine (56.888888888888886) reads 57.
func offerQty(v float64) string {
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v >= 10:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// offerAvailability is the offer's availability, its stock and whether it is
// past its source's stale limit.
func offerAvailability(o httpapi.OfferStatus) string {
	s := string(o.Available)
	if s == "" {
		s = string(pricewatch.AvailableUnknown)
	}
	if o.Stock != "" {
		s += " (" + o.Stock + ")"
	}
	if o.Stale {
		s += ", stale"
	}
	return s
}
