package httpapi

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"iter"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/rank"
)

// ExportColumns are the columns of gpuhunt's v2 catalog files, in order
// (gpuhunt src/gpuhunt/_internal/storage.py, CATALOG_V2_FIELDS); the
// provider is not a column: gpuhunt takes it from the file name.
var ExportColumns = []string{"instance_name", "location", "price", "cpu", "memory", "gpu_count", "gpu_name",
	"gpu_memory", "spot", "disk_size", "gpu_vendor", "flags", "cpu_arch", "provider_data"}

// ExportRow is one rentable offer in gpuhunt's catalog layout: Price is
// USD per hour of the offer's smallest rentable unit (GPUCount GPUs: a
// fixed instance whole, a per-GPU offer at its smallest count); CPU,
// Memory and DiskSize are what comes with those GPUs where the source
// states it (0 and no disk where it does not); Data carries pricewatch's
// own fields (gpuhunt's provider_data).
type ExportRow struct {
	Provider     string     `json:"provider"`
	InstanceName string     `json:"instance_name"`
	Location     string     `json:"location"`
	Price        float64    `json:"price"`
	CPU          int        `json:"cpu"`
	Memory       float64    `json:"memory"`
	GPUCount     int        `json:"gpu_count"`
	GPUName      string     `json:"gpu_name"`
	GPUMemory    float64    `json:"gpu_memory"`
	Spot         bool       `json:"spot"`
	DiskSize     *float64   `json:"disk_size"`
	GPUVendor    string     `json:"gpu_vendor"`
	Flags        []string   `json:"flags"`
	CPUArch      string     `json:"cpu_arch"`
	Data         ExportData `json:"provider_data"`
}

// ExportData is what pricewatch adds to a catalog row (provider_data).
type ExportData struct {
	Provider string          `json:"provider"`
	Key      string          `json:"key"`
	Source   string          `json:"source"`
	Card     string          `json:"card"`
	Mode     pricewatch.Mode `json:"mode"`
	RentUnit string          `json:"rent_unit"`
	// GPUCounts are the GPU counts one rental may take.
	GPUCounts []int `json:"gpu_counts"`
	// Currency and PricePerGPUHour are the offer's own (before the USD
	// conversion of the price column).
	Currency        string     `json:"currency"`
	PricePerGPUHour float64    `json:"price_per_gpu_hour"`
	Available       string     `json:"available"`
	Stock           string     `json:"stock,omitempty"`
	ObservedAt      ExportTime `json:"observed_at"`
	URL             string     `json:"url,omitempty"`
	// Country, Interconnect and RentURL are the offer's (see
	// pricewatch.Machine): where it runs, the GPU link it states, the page
	// where it is rented.
	Country      string `json:"country,omitempty"`
	Interconnect string `json:"interconnect,omitempty"`
	RentURL      string `json:"rent_url,omitempty"`
}

// UnknownLocation is the location column of an offer without a region.
const UnknownLocation = "unknown"

// Exportable reports whether an offer goes into the export: a rentable
// offer (not a reference price) of a known card, whole GPUs, a stated
// unit, billed by the hour (on-demand or spot: gpuhunt's catalogs hold
// hourly prices), not past its source's stale limit.
// A feed's copy of an offer some source scrapes directly (SkyPilot's
// RunPod rows beside RunPod's own) is left out, as rankings leave it out.
func Exportable(snap *rank.Snapshot, o pricewatch.Offer, cat *normalize.Catalog, direct map[string]bool) bool {
	_, known := cat.Card(o.Card)
	return known && (o.Source == o.Provider || !direct[o.Provider+"\x00"+string(o.Mode)]) && !o.Reference() && !o.Shared && o.RentUnit != "" && o.RentUnitGPUs > 0 && o.UnitPricePerHour > 0 &&
		(o.Mode == pricewatch.ModeOnDemand || o.Mode == pricewatch.ModeSpot) &&
		!rank.Stale(o, snap.GeneratedAt, snap.StaleAfter)
}

// ExportTime is a time of an export row, in JSON as time.Time writes it.
// The offers of a run share their times, so an export makes each one's
// JSON once (js) rather than once a row: at 1M rows, 35 MB of garbage.
type ExportTime struct {
	time.Time
	js []byte
}

// MarshalJSON is time.Time's, made once per distinct time when js is set.
func (t ExportTime) MarshalJSON() ([]byte, error) {
	if t.js != nil {
		return t.js, nil
	}
	return t.Time.MarshalJSON()
}

// ExportRows are the catalog rows of the snapshot's exportable offers
// (of one provider when provider is set), in EachExportRow's order.
func ExportRows(snap *rank.Snapshot, provider string) []ExportRow {
	return slices.Collect(EachExportRow(snap, provider))
}

// EachExportRow yields the catalog rows of the snapshot's exportable
// offers (of one provider when provider is set) one at a time, in the
// snapshot's own order: by source name, then by offer key (each source's
// offers are held sorted by key), so no row waits for the others to be
// collected and sorted (at 1M offers that held every row before the
// first was written). Offers whose currency cannot be converted to USD
// are left out.
func EachExportRow(snap *rank.Snapshot, provider string) iter.Seq[ExportRow] {
	return func(yield func(ExportRow) bool) {
		cat := normalize.DefaultCatalog()
		direct := map[string]bool{}
		for o := range snap.Offers() {
			if o.Source == o.Provider && !direct[o.Provider+"\x00"+string(o.Mode)] {
				direct[o.Provider+"\x00"+string(o.Mode)] = true
			}
		}
		names := map[string]string{} // per card: GPUHuntName, made once, not per row
		stamps := map[int64][]byte{} // per observation time: its JSON (a pack's times are UTC)
		for o := range snap.Offers() {
			if (provider != "" && o.Provider != provider) || !Exportable(snap, o, cat, direct) {
				continue
			}
			row, ok := exportRow(snap, cat, o, names)
			if ok {
				n := o.ObservedAt.UnixNano()
				js, seen := stamps[n]
				if !seen {
					js, _ = o.ObservedAt.MarshalJSON()
					stamps[n] = js
				}
				row.Data.ObservedAt.js = js
			}
			if ok && !yield(row) {
				return
			}
		}
	}
}

// exportRow is an exportable offer's catalog row; false when its currency
// cannot be converted to USD.
func exportRow(snap *rank.Snapshot, cat *normalize.Catalog, o pricewatch.Offer, names map[string]string) (ExportRow, bool) {
	usd, err := snap.Rates.Convert(o.UnitPricePerHour, o.Currency, "USD")
	if err != nil {
		return ExportRow{}, false
	}
	card, _ := cat.Card(o.Card)
	name, ok := names[card.ID]
	if !ok {
		name = GPUHuntName(card)
		names[card.ID] = name
	}
	counts := o.GPUCounts
	if counts == nil {
		counts = []int{}
	}
	region := o.Region
	if region == "" {
		// gpuhunt's loader refuses an empty location; the placeholder
		// is a word, so it needs no neutralising quote (a "-" would).
		region = UnknownLocation
	}
	avail := string(o.Available)
	if avail == "" {
		avail = string(pricewatch.AvailableUnknown)
	}
	// The offer's details are of its GPUs; the row prices the smallest
	// rental, so they scale to its GPUs (the same for a fixed instance).
	k := 1.0
	if o.GPUs > 0 && o.RentUnitGPUs > 0 {
		k = float64(o.RentUnitGPUs) / float64(o.GPUs)
	}
	var disk *float64
	if o.DiskGB > 0 {
		d := o.DiskGB * k
		disk = &d
	}
	return ExportRow{
		CPU: int(math.Round(o.VCPUs * k)), Memory: o.RAMGB * k, DiskSize: disk,
		Provider: o.Provider, InstanceName: o.OfferID, Location: region, Price: usd,
		GPUCount: o.RentUnitGPUs, GPUName: name, GPUMemory: card.MemoryGB,
		Spot: o.Mode == pricewatch.ModeSpot, GPUVendor: strings.ToLower(card.Vendor), Flags: []string{}, CPUArch: cpuArch(card),
		Data: ExportData{Provider: o.Provider, Key: o.Key, Source: o.Source, Card: o.Card, Mode: o.Mode, RentUnit: string(o.RentUnit), GPUCounts: counts,
			Currency: o.Currency, PricePerGPUHour: o.PricePerGPUHour, Available: avail, Stock: o.Stock,
			ObservedAt: ExportTime{Time: o.ObservedAt}, URL: o.URL, Country: o.Country, Interconnect: o.Interconnect, RentURL: o.RentURL},
	}, true
}

// GPUHuntName is a card's name as gpuhunt spells it (A100, H100NVL,
// RTX4090, RTX6000Ada, A6000, MI300X, GB200).
func GPUHuntName(c pricewatch.Card) string {
	if strings.HasSuffix(c.ID, "-GB200") {
		return "GB200"
	}
	if strings.HasSuffix(c.ID, "-GB300") {
		return "GB300"
	}
	n := c.Model
	for _, cut := range []string{"GeForce ", "Instinct ", "Tesla ", " Grace Hopper", " (Blackwell Ultra)", " Blackwell", " Generation"} {
		n = strings.ReplaceAll(n, cut, "")
	}
	if rest, ok := strings.CutPrefix(n, "RTX A"); ok {
		n = "A" + rest // Ampere workstation cards: A4000, A6000
	}
	return strings.ReplaceAll(n, " ", "")
}

func cpuArch(c pricewatch.Card) string {
	if strings.HasPrefix(c.ID, "GH200") || strings.HasSuffix(c.ID, "-GB200") || strings.HasSuffix(c.ID, "-GB300") {
		return "arm" // Grace CPUs
	}
	return "x86"
}

// appendPyFloat appends a float as Python's str() reads back with float().
func appendPyFloat(b []byte, v float64) []byte {
	from := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	if !bytes.ContainsAny(b[from:], ".eE") {
		b = append(b, ".0"...)
	}
	return b
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// Record is the row as gpuhunt's item_to_row writes it: price and memory
// as floats, spot as True/False, empty optional fields, provider_data as
// JSON.
func (r ExportRow) Record() ([]string, error) {
	rec, err := newRecorder().record(&r)
	if err != nil {
		return nil, err
	}
	for i := range rec {
		rec[i] = strings.Clone(rec[i]) // the recorder's views live until its next row
	}
	return rec, nil
}

// recorder makes rows' CSV records reusing its memory: an export of 1M
// rows allocated ~960 bytes a row (1 GB an export, which the collector
// let pile up to the size of the live heap: +310 MB of RSS) for strings
// the CSV writer copies at once.
type recorder struct {
	data ExportData // the row's, encoded from here: a pointer to the row's own would move every row to the heap
	rec  []string
	num  []byte
	js   bytes.Buffer
	enc  *json.Encoder
}

func newRecorder() *recorder {
	rc := &recorder{rec: make([]string, len(ExportColumns))}
	rc.enc = json.NewEncoder(&rc.js) // escapes HTML as json.Marshal does
	return rc
}

// record is r's record. Its strings are views of the recorder's buffers,
// valid until the next call: write them (csv.Writer copies) before then.
func (rc *recorder) record(r *ExportRow) ([]string, error) {
	rc.js.Reset()
	rc.data = r.Data
	if err := rc.enc.Encode(&rc.data); err != nil {
		return nil, err
	}
	// Numbers go into one buffer first (ends[i]: where number i ends);
	// views are taken once it stops growing.
	b := rc.num[:0]
	var ends [6]int
	b = appendPyFloat(b, r.Price)
	ends[0] = len(b)
	b = strconv.AppendInt(b, int64(r.CPU), 10)
	ends[1] = len(b)
	b = appendPyFloat(b, r.Memory)
	ends[2] = len(b)
	b = strconv.AppendInt(b, int64(r.GPUCount), 10)
	ends[3] = len(b)
	if r.GPUMemory > 0 {
		b = appendPyFloat(b, r.GPUMemory)
	}
	ends[4] = len(b)
	if r.DiskSize != nil {
		b = appendPyFloat(b, *r.DiskSize)
	}
	ends[5] = len(b)
	rc.num = b
	view := func(i int) string {
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		if ends[i] == from {
			return ""
		}
		return unsafe.String(&b[from], ends[i]-from)
	}
	flags := ""
	if len(r.Flags) > 0 {
		flags = strings.Join(r.Flags, " ")
	}
	js := rc.js.Bytes()
	js = js[:len(js)-1] // Encode's newline
	rec := rc.rec
	rec[0], rec[1], rec[2], rec[3], rec[4] = r.InstanceName, r.Location, view(0), view(1), view(2)
	rec[5], rec[6], rec[7], rec[8], rec[9] = view(3), r.GPUName, view(4), pyBool(r.Spot), view(5)
	rec[10], rec[11], rec[12], rec[13] = r.GPUVendor, flags, r.CPUArch, unsafe.String(&js[0], len(js))
	for i, c := range rec {
		rec[i] = neutralizeCell(c)
	}
	return rec, nil
}

// formulaStart are the first characters that make a spreadsheet read a
// cell as a formula (OWASP, CSV Injection:
// https://owasp.org/www-community/attacks/CSV_Injection).
const formulaStart = "=+-@\t\r"

// plainNumber is a decimal number, which a spreadsheet reads as a value.
var plainNumber = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// neutralizeCell puts a single quote before a cell that starts with = + -
// @ TAB or CR, as OWASP advises, so a spreadsheet shows it as text instead
// of running it (scraped names and locations are anyone's text). It is
// applied to every column, so no column is forgotten; a plain decimal
// number is left alone: it is read as a number, never as a formula, and a
// negative one must stay a number for gpuhunt's float() (pricewatch writes
// none today: prices, vCPUs, memory and disk are positive or 0).
func neutralizeCell(c string) string {
	if c == "" || !strings.ContainsRune(formulaStart, rune(c[0])) || plainNumber.MatchString(c) {
		return c
	}
	return "'" + c
}

// WriteExportCSV writes rows as a gpuhunt v2 catalog CSV (header first).
func WriteExportCSV(w io.Writer, rows []ExportRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ExportColumns); err != nil {
		return err
	}
	rc := newRecorder()
	for i := range rows {
		rec, err := rc.record(&rows[i])
		if err != nil {
			return err
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// exportRows are the rows of GET /v1/export.csv and /v1/export.json (of
// the provider asked for, which must be one the offers name), as they
// are made.
func (s *Server) exportRows(r *http.Request) (iter.Seq[ExportRow], string, error) {
	v, err := s.view()
	if err != nil {
		return nil, "", err
	}
	q := r.URL.Query()
	if err := checkParams(q, "provider"); err != nil {
		return nil, "", err
	}
	provider := q.Get("provider")
	if err := CheckExportProvider(v.Snapshot, provider); err != nil {
		return nil, "", err
	}
	return EachExportRow(v.Snapshot, provider), provider, nil
}

// CheckExportProvider is the export's one check of a provider filter,
// for the endpoint and the offline CLI alike: empty (every provider) or a
// provider of the snapshot's offers, else an EInvalid error naming it, so
// a misspelt name is not answered with an empty catalog.
func CheckExportProvider(snap *rank.Snapshot, provider string) error {
	if provider == "" {
		return nil
	}
	for o := range snap.Offers() {
		if o.Provider == provider {
			return nil
		}
	}
	return pricewatch.Errorf(pricewatch.EInvalid, "provider: unknown provider %q (the provider column of /v1/offers)", provider)
}

// exportIdle is how long an export may wait on its client between two
// batches of rows: each batch moves the write deadline this far ahead, so
// a big export is not cut by the server's write timeout while a client
// that stops reading still lets go of its heavy slot.
const exportIdle = 15 * time.Second

// exportBatch is how many rows are written between two checks of the
// request's context and two moves of the write deadline.
const exportBatch = 1024

// streamRows writes the rows one at a time, as they are made, through a
// buffer to w (neither the rows nor the body are ever held whole: at 1M
// offers the body was 1.7 GB per request),
// checking the request's context and moving the write deadline every
// exportBatch rows. A failure after the status line aborts the response
// (http.ErrAbortHandler), so a cut export never looks complete.
func (s *Server) streamRows(w http.ResponseWriter, r *http.Request, rows iter.Seq[ExportRow], head func(*bufio.Writer) error, row func(*bufio.Writer, int, ExportRow) error, tail func(*bufio.Writer) error) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(exportIdle)) // not supported by every writer (tests): then the server's own
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	fail := func(err error) {
		s.log.Debug("export cut", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err := head(bw); err != nil {
		fail(err)
	}
	i := 0
	for x := range rows {
		if i%exportBatch == 0 {
			if err := r.Context().Err(); err != nil {
				fail(err)
			}
			rc.SetWriteDeadline(time.Now().Add(exportIdle))
		}
		if err := row(bw, i, x); err != nil {
			fail(err)
		}
		i++
	}
	if err := tail(bw); err != nil {
		fail(err)
	}
	if err := bw.Flush(); err != nil {
		fail(err)
	}
}

func (s *Server) exportCSV(w http.ResponseWriter, r *http.Request) error {
	rows, provider, err := s.exportRows(r)
	if err != nil {
		return err
	}
	name := "pricewatch.csv"
	if provider != "" {
		name = safeFileName(provider) + ".csv"
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	var cw *csv.Writer
	rc := newRecorder()
	s.streamRows(w, r, rows, func(bw *bufio.Writer) error {
		cw = csv.NewWriter(bw)
		return cw.Write(ExportColumns)
	}, func(_ *bufio.Writer, _ int, x ExportRow) error {
		rec, err := rc.record(&x)
		if err != nil {
			return err
		}
		return cw.Write(rec)
	}, func(*bufio.Writer) error {
		cw.Flush()
		return cw.Error()
	})
	return nil
}

// exportJSON answers the same rows as objects, each value as scraped (the
// CSV's neutralising quote is for spreadsheets); pricewatch export reads
// them from a running daemon, so its files are the ones it writes offline.
// The array is written a row at a time, byte for byte what encoding the
// whole slice gives.
func (s *Server) exportJSON(w http.ResponseWriter, r *http.Request) error {
	rows, _, err := s.exportRows(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	// One encoder and buffer for every row (as the CSV's recorder): a
	// json.Marshal per row left its bytes to the collector.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	var row ExportRow // encoded from here, not from the loop's own copy, which would escape
	s.streamRows(w, r, rows, func(bw *bufio.Writer) error {
		return bw.WriteByte('[')
	}, func(bw *bufio.Writer, i int, x ExportRow) error {
		buf.Reset()
		row = x
		if err := enc.Encode(&row); err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		_, err := bw.Write(buf.Bytes()[:buf.Len()-1]) // Encode's newline
		return err
	}, func(bw *bufio.Writer) error {
		_, err := bw.WriteString("]\n")
		return err
	})
	return nil
}

// safeFileName keeps letters, digits, dot, dash and underscore.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
