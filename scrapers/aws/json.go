package aws

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/pricewatch/pricewatch"
)

// jsonProduct is the part of products.<SKU> the filters read.
type jsonProduct struct {
	ProductFamily string `json:"productFamily"`
	Attributes    struct {
		InstanceType    string `json:"instanceType"`
		Tenancy         string `json:"tenancy"`
		OperatingSystem string `json:"operatingSystem"`
		PreInstalledSw  string `json:"preInstalledSw"`
		CapacityStatus  string `json:"capacitystatus"`
		MarketOption    string `json:"marketoption"`
		LocationType    string `json:"locationType"`
		Operation       string `json:"operation"`
		GPU             string `json:"gpu"`
		RegionCode      string `json:"regionCode"`
		VCPU            string `json:"vcpu"`
		Memory          string `json:"memory"`
		Storage         string `json:"storage"`
	} `json:"attributes"`
}

// jsonTerm is one terms.<type>.<SKU>.<SKU.termCode> entry.
type jsonTerm struct {
	PriceDimensions map[string]struct {
		Unit         string            `json:"unit"`
		PricePerUnit map[string]string `json:"pricePerUnit"`
	} `json:"priceDimensions"`
	TermAttributes struct {
		LeaseContractLength string `json:"LeaseContractLength"`
		OfferingClass       string `json:"OfferingClass"`
		PurchaseOption      string `json:"PurchaseOption"`
	} `json:"termAttributes"`
}

type keptProduct struct {
	instanceType string
	gpus         count
	machine      machine
}

// ParseJSON streams a region's JSON offer file ({"products": {SKU: …},
// "terms": {"OnDemand": {SKU: {…}}, "Reserved": {…}}, …}) token by token,
// never decoding the whole document: each product is decoded alone and
// kept only if it passes the filters (a few hundred GPU products at most),
// then the terms of those SKUs are decoded one SKU at a time and the rest
// skipped. The products section must come before the terms, as it does in
// AWS's files. A document cut short fails with the byte offset it ended at.
func ParseJSON(r io.Reader, f Filter, emit func(pricewatch.Observation) error) (Stats, error) {
	m := newMatcher(f)
	br := bufio.NewReaderSize(r, 256<<10)
	if c, err := firstByte(br); err == nil && c == '<' {
		head, _ := br.Peek(160)
		return m.stats, fmt.Errorf("expected an AWS price list JSON, got markup: %s", oneLine(head))
	} else if err != nil {
		return m.stats, errors.New("empty JSON offer file")
	}
	dec := json.NewDecoder(br)
	fail := func(err error) (Stats, error) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return m.stats, fmt.Errorf("JSON offer file cut short: %w in the value at byte offset %d", io.ErrUnexpectedEOF, dec.InputOffset())
		}
		return m.stats, fmt.Errorf("JSON offer file at byte offset %d: %w", dec.InputOffset(), err)
	}
	if err := delim(dec, '{'); err != nil {
		return fail(err)
	}
	products := map[string]keptProduct{}
	sawProducts, sawTerms := false, false
	for dec.More() {
		key, err := str(dec)
		if err != nil {
			return fail(err)
		}
		switch key {
		case "products":
			sawProducts = true
			if err := m.jsonProducts(dec, products); err != nil {
				return fail(err)
			}
		case "terms":
			if !sawProducts {
				return fail(errors.New(`"terms" before "products": this streaming parser needs the products first`))
			}
			sawTerms = true
			if err := m.jsonTerms(dec, products, emit); err != nil {
				return fail(err)
			}
		case "offerCode", "version", "publicationDate":
			var s string
			if err := dec.Decode(&s); err != nil {
				return fail(fmt.Errorf("%s: %w", key, err))
			}
			switch key {
			case "offerCode":
				if s != "AmazonEC2" {
					return fail(fmt.Errorf("offer file is for %q, not AmazonEC2", s))
				}
			case "version":
				m.stats.Version = s
			default:
				m.stats.Published = s
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if err := delim(dec, '}'); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail(errors.New("data after the end of the offer document"))
	}
	switch {
	case !sawProducts:
		return m.stats, errors.New(`JSON offer file has no "products" (layout change?)`)
	case !sawTerms:
		return m.stats, errors.New(`JSON offer file has no "terms" (layout change?)`)
	case m.stats.Rows == 0:
		return m.stats, errors.New("JSON offer file lists no products")
	}
	return m.stats, nil
}

func (m *matcher) jsonProducts(dec *json.Decoder, keep map[string]keptProduct) error {
	if err := delim(dec, '{'); err != nil {
		return fmt.Errorf("products: %w", err)
	}
	for dec.More() {
		sku, err := str(dec)
		if err != nil {
			return err
		}
		var p jsonProduct
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("product %s: %w", sku, err)
		}
		m.stats.Rows++
		a := &p.Attributes
		if !m.familyOK(a.InstanceType) {
			continue
		}
		gpus, ok := m.productOK(&product{
			instanceType: a.InstanceType, productFamily: p.ProductFamily, tenancy: a.Tenancy,
			os: a.OperatingSystem, preInstalledSw: a.PreInstalledSw, capacityStatus: a.CapacityStatus,
			marketOption: a.MarketOption, locationType: a.LocationType, operation: a.Operation,
			gpu: a.GPU, regionCode: a.RegionCode,
		})
		if ok {
			keep[sku] = keptProduct{a.InstanceType, gpus, parseMachine(a.VCPU, a.Memory, a.Storage)}
		}
	}
	return delim(dec, '}')
}

func (m *matcher) jsonTerms(dec *json.Decoder, products map[string]keptProduct, emit func(pricewatch.Observation) error) error {
	if err := delim(dec, '{'); err != nil {
		return fmt.Errorf("terms: %w", err)
	}
	for dec.More() {
		termType, err := str(dec)
		if err != nil {
			return err
		}
		if err := delim(dec, '{'); err != nil {
			return fmt.Errorf("terms.%s: %w", termType, err)
		}
		for dec.More() {
			sku, err := str(dec)
			if err != nil {
				return err
			}
			p, ok := products[sku]
			if !ok || (termType != "OnDemand" && termType != "Reserved") {
				var skip struct{}
				if err := dec.Decode(&skip); err != nil {
					return fmt.Errorf("terms.%s.%s: %w", termType, sku, err)
				}
				continue
			}
			var terms map[string]jsonTerm
			if err := dec.Decode(&terms); err != nil {
				return fmt.Errorf("terms.%s.%s: %w", termType, sku, err)
			}
			for _, code := range sortedKeys(terms) {
				t := terms[code]
				ta := t.TermAttributes
				md, ok := mode(termType, ta.LeaseContractLength, ta.PurchaseOption, ta.OfferingClass)
				if !ok {
					continue
				}
				for _, rc := range sortedKeys(t.PriceDimensions) {
					d := t.PriceDimensions[rc]
					if d.Unit != "Hrs" {
						continue // upfront fees ("Quantity")
					}
					for _, cur := range sortedKeys(d.PricePerUnit) {
						v, ok := price(d.PricePerUnit[cur])
						if !ok {
							continue
						}
						if o, ok := m.observation(p.instanceType, p.gpus, p.machine, md, v, cur); ok {
							if err := emit(o); err != nil {
								return err
							}
						}
						break
					}
				}
			}
		}
		if err := delim(dec, '}'); err != nil {
			return err
		}
	}
	return delim(dec, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func firstByte(br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, nil
		}
	}
}

func delim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, t)
	}
	return nil
}

func str(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("want an object key, got %v", t)
	}
	return s, nil
}
