// Package tencent scrapes Tencent Cloud's CVM instance configurations with
// their prices, DescribeZoneInstanceConfigInfos
// (POST https://cvm.tencentcloudapi.com/, API 2017-03-12, signed with
// TC3-HMAC-SHA256 from PRICEWATCH_TENCENT_SECRET_ID and
// PRICEWATCH_TENCENT_SECRET_KEY), for its GPU families, in CNY per
// instance, one region after the other (config regions).
//
// Billing: the request asks for POSTPAID_BY_HOUR (按量计费); an item's
// Price.UnitPriceDiscount (else UnitPrice) is CNY per instance-hour when
// ChargeUnit is HOUR; other charge units are not read. Where the answer
// also carries UnitPriceSecondStep/ThirdStep, the API reference says
// UnitPrice(Discount) holds for the first 96 hours only (later hours cost
// the step prices): the scraper keeps that first-step price. Status SELL
// is available, SOLD_OUT not, nor StatusCategory WithoutStock.
//
// GPU model and count: the table families (instance family → card, from
// Tencent's GPU instance documentation); GpuCount is the count, a fraction
// below one for vGPU shares (GN7vw). An item of a GPU family the table
// does not know (Gpu > 0) is kept under its instance type with one GPU, so
// that normalize reports it.
package tencent

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/scrapers"
)

// Credentials of a Tencent Cloud API key (CAM, read access to CVM).
const (
	SecretIDEnv  = "PRICEWATCH_TENCENT_SECRET_ID"
	SecretKeyEnv = "PRICEWATCH_TENCENT_SECRET_KEY"
)

// API names of the call.
const (
	Service = "cvm"
	Action  = "DescribeZoneInstanceConfigInfos"
	Version = "2017-03-12"
)

// DefaultRegions are read when config names none.
var DefaultRegions = []string{"ap-guangzhou"}

func init() {
	scrapers.Add(scrapers.Registration{
		Name:        "tencent",
		Description: "Tencent Cloud CVM DescribeZoneInstanceConfigInfos (POSTPAID_BY_HOUR), GPU families",
		Auth:        "TC3-HMAC-SHA256 with " + SecretIDEnv + ", " + SecretKeyEnv,
		Yields:      "ondemand; CNY per instance-hour, per zone; vGPU shares marked shared; availability from Status",
		Defaults: scrapers.Settings{
			Enabled:    true,
			URL:        "https://cvm.tencentcloudapi.com/",
			Schedule:   "35 3 * * *",
			StaleAfter: 60 * time.Hour,
			Timeout:    30 * time.Second,
			Delay:      time.Second,
		},
		New: func() scrapers.Scraper { return &Scraper{} },
	})
}

// Scraper is the Tencent Cloud source.
type Scraper struct {
	// Regions are read in turn (default DefaultRegions).
	Regions []string `yaml:"regions"`
	// now is the signing clock (tests fix it).
	now func() time.Time
}

// Check disables the source until both credentials are set.
func (s *Scraper) Check(env *scrapers.Env) error {
	return scrapers.NeedSecrets(env, "a Tencent Cloud API key", SecretIDEnv, SecretKeyEnv)
}

// RequestBody asks for every pay-as-you-go configuration of a region.
func RequestBody() []byte {
	b, _ := json.Marshal(map[string]any{"Filters": []map[string]any{
		{"Name": "instance-charge-type", "Values": []string{"POSTPAID_BY_HOUR"}},
	}})
	return b
}

// Sign returns the TC3-HMAC-SHA256 Authorization header of a POST of body
// with content type application/json to host at t (Tencent Cloud API 3.0
// signature: canonical request, string to sign, derived key, signature).
func Sign(secretID, secretKey, host string, body []byte, t time.Time) string {
	const ct = "application/json; charset=utf-8"
	sum := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	canonical := "POST\n/\n\ncontent-type:" + ct + "\nhost:" + host + "\n\ncontent-type;host\n" + sum(body)
	date := t.UTC().Format("2006-01-02")
	scope := date + "/" + Service + "/tc3_request"
	toSign := "TC3-HMAC-SHA256\n" + strconv.FormatInt(t.Unix(), 10) + "\n" + scope + "\n" + sum([]byte(canonical))
	key := mac(mac(mac([]byte("TC3"+secretKey), date), Service), "tc3_request")
	sig := hex.EncodeToString(mac(key, toSign))
	return "TC3-HMAC-SHA256 Credential=" + secretID + "/" + scope + ", SignedHeaders=content-type;host, Signature=" + sig
}

// Scrape asks each region once.
func (s *Scraper) Scrape(ctx context.Context, env *scrapers.Env) (scrapers.Result, error) {
	if err := s.Check(env); err != nil {
		return scrapers.Result{}, err
	}
	u, err := url.Parse(env.URL())
	if err != nil || u.Host == "" {
		return scrapers.Result{}, fmt.Errorf("tencent: bad url %q", env.URL())
	}
	regions := s.Regions
	if len(regions) == 0 {
		regions = DefaultRegions
	}
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	c, err := env.NewCollector(ctx)
	if err != nil {
		return scrapers.Result{}, err
	}
	body := RequestBody()
	var out []pricewatch.Observation
	for _, region := range regions {
		t := now()
		hdr := http.Header{
			"Accept":         {"application/json"},
			"Content-Type":   {"application/json; charset=utf-8"},
			"Authorization":  {Sign(env.Secret(SecretIDEnv), env.Secret(SecretKeyEnv), u.Host, body, t)},
			"X-TC-Action":    {Action},
			"X-TC-Version":   {Version},
			"X-TC-Timestamp": {strconv.FormatInt(t.Unix(), 10)},
			"X-TC-Region":    {region},
		}
		resp, err := env.Fetch(ctx, c, scrapers.Request{Method: http.MethodPost, URL: env.URL(), Body: body, Header: hdr})
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("tencent %s: %w", region, err)
		}
		obs, err := Parse(resp.Body, env.URL())
		if err != nil {
			return scrapers.Result{}, fmt.Errorf("tencent %s: %w", region, err)
		}
		out = append(out, obs...)
		env.AddOffers(len(obs))
	}
	return scrapers.Result{Observations: out}, nil
}

type item struct {
	Zone               string  `json:"Zone"`
	InstanceType       string  `json:"InstanceType"`
	InstanceChargeType string  `json:"InstanceChargeType"`
	InstanceFamily     string  `json:"InstanceFamily"`
	Status             string  `json:"Status"`
	StatusCategory     string  `json:"StatusCategory"`
	GPU                float64 `json:"Gpu"`
	GPUCount           float64 `json:"GpuCount"`
	// Cpu is the instance's cores ("核", its vCPUs: S5.MEDIUM4 has 2) and
	// Memory its memory in GB (tencentcloud-sdk-go cvm/v20170312
	// InstanceTypeQuotaItem: "实例内存容量，单位：GB"), read as GiB, memory's
	// binary GB. StorageBlockAmount counts local storage blocks, not GB: no
	// disk is read.
	CPU    float64 `json:"Cpu"`
	Memory float64 `json:"Memory"`
	Price  struct {
		UnitPrice         scrapers.Number `json:"UnitPrice"`
		UnitPriceDiscount scrapers.Number `json:"UnitPriceDiscount"`
		ChargeUnit        string          `json:"ChargeUnit"`
	} `json:"Price"`
}

type response struct {
	Response *struct {
		Error *struct {
			Code    string `json:"Code"`
			Message string `json:"Message"`
		} `json:"Error"`
		Items *[]item `json:"InstanceTypeQuotaSet"`
	} `json:"Response"`
}

// family is the card of one GPU instance family.
type family struct {
	Card     string
	MemoryGB float64
}

// families maps Tencent's GPU instance families to their card, as
// Tencent's GPU instance type pages state them
// (cloud.tencent.com/document/product/560/19701): GN7 NVIDIA T4, GN7vw a
// vGPU share of a T4, GN10X/GN10Xp Tesla V100 NVLink 32 GB (SXM2), GT4
// A100 NVLink 40 GB (SXM4), PNV4 A10.
var families = map[string]family{
	"GN7":    {"T4", 16},
	"GN7VW":  {"T4", 16},
	"GN10X":  {"V100 SXM2 32GB", 32},
	"GN10XP": {"V100 SXM2 32GB", 32},
	"GT4":    {"A100 SXM4 40GB", 40},
	"PNV4":   {"A10", 24},
}

// Parse turns one region's answer into observations (an answer with no
// GPU item is no error: a region may sell none).
func Parse(body []byte, src string) ([]pricewatch.Observation, error) {
	var r response
	if err := scrapers.UnmarshalJSON(body, "", &r); err != nil {
		return nil, err
	}
	if r.Response == nil {
		return nil, fmt.Errorf("%w: no Response object", scrapers.ErrNothingParsed)
	}
	if e := r.Response.Error; e != nil {
		return nil, fmt.Errorf("API error %s: %s", e.Code, e.Message)
	}
	if r.Response.Items == nil {
		return nil, fmt.Errorf("%w: no InstanceTypeQuotaSet in the response", scrapers.ErrNothingParsed)
	}
	var out []pricewatch.Observation
	for _, it := range *r.Response.Items {
		if o, ok := observation(it, src); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

func observation(it item, src string) (pricewatch.Observation, bool) {
	id := strings.TrimSpace(it.InstanceType)
	fam, known := families[strings.ToUpper(strings.TrimSpace(it.InstanceFamily))]
	if id == "" || (!known && it.GPU <= 0 && it.GPUCount <= 0) || !strings.EqualFold(it.Price.ChargeUnit, "HOUR") ||
		(it.InstanceChargeType != "" && it.InstanceChargeType != "POSTPAID_BY_HOUR") {
		return pricewatch.Observation{}, false
	}
	price, ok := it.Price.UnitPriceDiscount.Get()
	if !ok || !(price > 0) {
		price, ok = it.Price.UnitPrice.Get()
	}
	if !ok || !(price > 0) || math.IsInf(price, 0) {
		return pricewatch.Observation{}, false
	}
	o := pricewatch.Observation{
		Source: "tencent", Provider: "tencent", OfferID: id, Region: strings.TrimSpace(it.Zone),
		Price: price, Currency: "CNY", Unit: pricewatch.PerHour, Mode: pricewatch.ModeOnDemand, URL: src,
	}
	n := it.GPUCount
	if n <= 0 {
		n = it.GPU
	}
	switch {
	case known && n >= 1 && n == math.Trunc(n):
		o.GPUName, o.GPUCount, o.GPUMemoryGB, o.RentUnit = fam.Card, int(n), fam.MemoryGB, pricewatch.RentFixed
	case known && n > 0 && n < 1:
		o.GPUName, o.GPUCount, o.GPUFraction, o.GPUMemoryGB, o.RentUnit = fam.Card, 1, n, fam.MemoryGB, pricewatch.RentFixed
	default:
		o.GPUName, o.GPUCount = id, 1 // family or count unknown: reported, never ranked
	}
	if it.CPU > 0 && it.CPU < 1e5 {
		o.VCPUs = it.CPU
	}
	if it.Memory > 0 && it.Memory < 1e7 {
		o.RAMGB = it.Memory
	}
	o.RentURL = RentURL
	switch strings.ToUpper(strings.TrimSpace(it.Status)) {
	case "SELL":
		o.Available, o.Stock = pricewatch.AvailableYes, "on sale"
	case "SOLD_OUT":
		o.Available, o.Stock = pricewatch.AvailableNo, "sold out"
	}
	// StatusCategory (the API reference: EnoughStock, NormalStock,
	// UnderStock, WithoutStock) says how much is left; an item on sale
	// whose stock is gone cannot be rented now.
	switch strings.TrimSpace(it.StatusCategory) {
	case "WithoutStock":
		o.Available, o.Stock = pricewatch.AvailableNo, "sold out (WithoutStock)"
	case "UnderStock":
		if o.Available == pricewatch.AvailableYes {
			o.Stock = "on sale, almost sold out (UnderStock)"
		}
	}
	return o, true
}

// RentURL is the CVM console, where an instance is created.
const RentURL = "https://console.tencentcloud.com/cvm"
