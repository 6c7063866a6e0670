// Package scaletest makes the data the scale benchmarks and
// scripts/bench-scale run on: Vast offer-search answers of any size in the
// real format (the captured bundles of fixtures/vast, each copied with a
// new id and its prices moved by up to ±20%, so the card mix is the real
// one), and the offers they normalize to.
package scaletest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/fixtures"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/scrapers/vast"
)

// FirstID is the id of the first generated bundle.
const FirstID = 30_000_000

// captured are the raw bundles of the capture.
func captured() ([]map[string]json.RawMessage, error) {
	b, err := fs.ReadFile(fixtures.FS(), "vast/bundles.json")
	if err != nil {
		return nil, err
	}
	var d struct {
		Offers []map[string]json.RawMessage `json:"offers"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	return d.Offers, nil
}

// WriteBundles writes a Vast offer-search answer of n bundles (each one an
// on-demand and, where it takes bids, a spot offer). Variant v moves the
// prices of about share of the bundles (0: none) from the v = 0 answer,
// with the same ids and everything else alike: an answer of a later run.
func WriteBundles(w io.Writer, n int, v int, share float64) error {
	caps, err := captured()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString("{\"offers\": [\n")
	r := rand.New(rand.NewPCG(11, 12))
	moved := rand.New(rand.NewPCG(uint64(v)+100, 13))
	for i := range n {
		src := caps[i%len(caps)]
		f := 0.8 + 0.4*r.Float64()
		if v > 0 && moved.Float64() < share {
			f *= 0.9 + 0.2*moved.Float64()
		}
		id := FirstID + i
		o := make(map[string]json.RawMessage, len(src))
		for k, val := range src {
			o[k] = val
		}
		o["id"] = json.RawMessage(fmt.Sprint(id))
		o["ask_contract_id"] = o["id"]
		for _, k := range []string{"dph_total", "min_bid", "dph_base", "discounted_dph_total"} {
			var x float64
			if json.Unmarshal(src[k], &x) == nil && x > 0 {
				o[k] = json.RawMessage(fmt.Sprint(x * f))
			}
		}
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteString(",\n")
		}
		bw.Write(b)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// Offers are the normalized offers of WriteBundles(n, v, share), observed
// at at.
func Offers(n, v int, share float64, at time.Time) ([]pricewatch.Offer, error) {
	var buf bytes.Buffer
	if err := WriteBundles(&buf, n, v, share); err != nil {
		return nil, err
	}
	obs, err := vast.Parse(buf.Bytes(), "https://console.vast.ai/api/v0/bundles/")
	if err != nil {
		return nil, err
	}
	return normalize.DefaultCatalog().Normalize(obs, at).Offers, nil
}

// ChangeRuns calls record with the offers at t0 and then at each of runs
// later runs, 10 minutes apart, each moving the prices of share of the
// offers (chosen at random, by up to ±10%) in place: the history the
// scale benchmarks read.
func ChangeRuns(offers []pricewatch.Offer, t0 time.Time, runs int, share float64, record func(at time.Time, offers []pricewatch.Offer) error) error {
	if err := record(t0, offers); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(7, 8))
	for v := range runs {
		for range int(float64(len(offers)) * share) {
			o := &offers[r.IntN(len(offers))]
			o.PricePerGPUHour *= 0.9 + 0.2*r.Float64()
		}
		if err := record(t0.Add(time.Duration(v+1)*10*time.Minute), offers); err != nil {
			return err
		}
	}
	return nil
}
