package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/pricewatch/pricewatch"
)

// The binary encodings of schema 2. Every multi-byte number is big-endian
// or a varint; strings are a uvarint length and the bytes.

// offerCodec is the first byte of an encoded offer.
const offerCodec = 1

// offerHead is the fixed part of an encoded offer: codec, first seen, the
// pinned observed-at (0: the source's seen time).
const offerHead = 17

var errShort = errors.New("truncated record")

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendFloat(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

// Offer flags.
const (
	offerShared = 1 << iota
	offerHasReliability
	// offerHasCosts: the offer's own storage and egress prices follow the
	// reliability (two floats); records written before lack both.
	offerHasCosts
	offerBid
	// offerHasPlanTerms: the plan's monthly cap hours and included egress
	// follow (two floats).
	offerHasPlanTerms
	// offerHasMachine: what comes with the GPUs follows (vCPUs, RAM and
	// disk as three floats; interconnect, country and rent URL as strings).
	offerHasMachine
)

// encodeOffer appends the schema-2 encoding of o (its key and source are the
// record's key, its observed-at the source's seen time unless pinned).
func encodeOffer(b []byte, o *pricewatch.Offer, pinned time.Time) []byte {
	b = append(b, offerCodec)
	b = binary.BigEndian.AppendUint64(b, uint64(nanos(o.FirstSeen)))
	b = binary.BigEndian.AppendUint64(b, uint64(nanos(pinned)))
	var flags uint64
	if o.Shared {
		flags |= offerShared
	}
	if o.Reliability != nil {
		flags |= offerHasReliability
	}
	if o.StoragePerGBMonth != 0 || o.EgressPerGB != 0 {
		flags |= offerHasCosts
	}
	if o.Bid {
		flags |= offerBid
	}
	if o.MonthlyCapHours != 0 || o.FreeEgressGBMonth != 0 {
		flags |= offerHasPlanTerms
	}
	if o.VCPUs != 0 || o.RAMGB != 0 || o.DiskGB != 0 || o.Interconnect != "" || o.Country != "" || o.RentURL != "" {
		flags |= offerHasMachine
	}
	b = binary.AppendUvarint(b, flags)
	for _, s := range [...]string{o.Provider, o.OfferID, o.Region, string(o.Kind), o.Card, o.GPUName,
		string(o.RentUnit), string(o.Available), o.Stock, string(o.Mode), o.Currency, o.ReclaimRisk, o.URL} {
		b = appendString(b, s)
	}
	b = binary.AppendVarint(b, int64(o.GPUs))
	b = binary.AppendVarint(b, int64(o.RentUnitGPUs))
	b = binary.AppendUvarint(b, uint64(len(o.GPUCounts)))
	for _, c := range o.GPUCounts {
		b = binary.AppendVarint(b, int64(c))
	}
	b = appendFloat(b, o.UnitPricePerHour)
	b = appendFloat(b, o.GPUFraction)
	b = appendFloat(b, o.CommitmentHours)
	b = appendFloat(b, o.PricePerGPUHour)
	if o.Reliability != nil {
		b = appendFloat(b, *o.Reliability)
	}
	if flags&offerHasCosts != 0 {
		b = appendFloat(b, o.StoragePerGBMonth)
		b = appendFloat(b, o.EgressPerGB)
	}
	if flags&offerHasPlanTerms != 0 {
		b = appendFloat(b, o.MonthlyCapHours)
		b = appendFloat(b, o.FreeEgressGBMonth)
	}
	if flags&offerHasMachine != 0 {
		b = appendFloat(b, o.VCPUs)
		b = appendFloat(b, o.RAMGB)
		b = appendFloat(b, o.DiskGB)
		b = appendString(b, o.Interconnect)
		b = appendString(b, o.Country)
		b = appendString(b, o.RentURL)
	}
	return b
}

// reader walks an encoded record.
type reader struct {
	b   []byte
	err error
	// alias makes strings point into b instead of copying them (valid only
	// while b is: a read transaction).
	alias bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errShort
	}
	r.b = nil
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	v := r.bytes(int(r.uvarint()))
	if len(v) == 0 {
		return ""
	}
	if r.alias {
		return unsafe.String(&v[0], len(v))
	}
	return string(v)
}

func (r *reader) u64() uint64 {
	v := r.bytes(8)
	if v == nil {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func (r *reader) float() float64 { return math.Float64frombits(r.u64()) }

// offerBuf holds what a decoded offer's slices and pointers point at, so
// that a scan can reuse them.
type offerBuf struct {
	counts []int
	rel    float64
}

// decodeOffer decodes an encoded offer into o, with its observed-at from
// seen unless the record pins one. With buf, o's counts and reliability
// point into buf (reused by the next decode), and with alias its strings
// point into v.
func decodeOffer(v []byte, o *pricewatch.Offer, seen time.Time, buf *offerBuf, alias bool) error {
	if len(v) < offerHead || v[0] != offerCodec {
		return fmt.Errorf("offer record: codec %d of %d bytes", firstByte(v), len(v))
	}
	key, src := o.Key, o.Source
	*o = pricewatch.Offer{Key: key, Source: src}
	o.FirstSeen = fromNanos(int64(binary.BigEndian.Uint64(v[1:9])))
	if p := int64(binary.BigEndian.Uint64(v[9:17])); p != 0 {
		o.ObservedAt = fromNanos(p)
	} else {
		o.ObservedAt = seen
	}
	r := reader{b: v[offerHead:], alias: alias}
	flags := r.uvarint()
	o.Shared = flags&offerShared != 0
	o.Bid = flags&offerBid != 0
	o.Provider = r.str()
	o.OfferID = r.str()
	o.Region = r.str()
	o.Kind = pricewatch.Kind(r.str())
	o.Card = r.str()
	o.GPUName = r.str()
	o.RentUnit = pricewatch.RentUnit(r.str())
	o.Available = pricewatch.Availability(r.str())
	o.Stock = r.str()
	o.Mode = pricewatch.Mode(r.str())
	o.Currency = r.str()
	o.ReclaimRisk = r.str()
	o.URL = r.str()
	o.GPUs = int(r.varint())
	o.RentUnitGPUs = int(r.varint())
	if n := int(r.uvarint()); n > 0 && n <= len(r.b) {
		var counts []int
		if buf != nil {
			counts = buf.counts[:0]
		} else {
			counts = make([]int, 0, n)
		}
		for range n {
			counts = append(counts, int(r.varint()))
		}
		if buf != nil {
			buf.counts = counts
		}
		o.GPUCounts = counts
	} else if n > len(r.b) {
		r.fail()
	}
	o.UnitPricePerHour = r.float()
	o.GPUFraction = r.float()
	o.CommitmentHours = r.float()
	o.PricePerGPUHour = r.float()
	if flags&offerHasReliability != 0 {
		rel := r.float()
		if buf != nil {
			buf.rel = rel
			o.Reliability = &buf.rel
		} else {
			o.Reliability = &rel
		}
	}
	o.StoragePerGBMonth, o.EgressPerGB = 0, 0
	if flags&offerHasCosts != 0 {
		o.StoragePerGBMonth = r.float()
		o.EgressPerGB = r.float()
	}
	o.MonthlyCapHours, o.FreeEgressGBMonth = 0, 0
	if flags&offerHasPlanTerms != 0 {
		o.MonthlyCapHours = r.float()
		o.FreeEgressGBMonth = r.float()
	}
	if flags&offerHasMachine != 0 {
		o.VCPUs = r.float()
		o.RAMGB = r.float()
		o.DiskGB = r.float()
		o.Interconnect = r.str()
		o.Country = r.str()
		o.RentURL = r.str()
	}
	return r.err
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// pinnedOf is the observed-at an encoded offer pins (zero: none).
func pinnedOf(v []byte) time.Time {
	if len(v) < offerHead {
		return time.Time{}
	}
	return fromNanos(int64(binary.BigEndian.Uint64(v[9:17])))
}

// firstSeenOf is an encoded offer's first seen time.
func firstSeenOf(v []byte) time.Time {
	if len(v) < offerHead {
		return time.Time{}
	}
	return fromNanos(int64(binary.BigEndian.Uint64(v[1:9])))
}

// History rows. A raw row is one change of one offer; a month row holds
// the daily open/min/max/close of the offer's compacted days of one month.
//
//	raw:   flags, price (8 bytes), uvarint terms id
//	month: flags (rowMonth), then per day: day of month, flags, uvarint
//	       terms id, open, close, and min and max where they are neither
//	       (8 bytes each)
//
// flags: bits 0–1 the event (appeared, changed, vanished), bits 2–3 the
// availability ("", yes, no, unknown), bit 7 a month row.
const rowMonth = 0x80

var events = [...]Event{Appeared, Changed, Vanished}

var availabilities = [...]pricewatch.Availability{"", pricewatch.AvailableYes, pricewatch.AvailableNo, pricewatch.AvailableUnknown}

func rowFlags(ev Event, a pricewatch.Availability) byte {
	var f byte
	for i, e := range events {
		if e == ev {
			f = byte(i)
		}
	}
	for i, x := range availabilities {
		if x == a {
			f |= byte(i) << 2
		}
	}
	return f
}

func flagEvent(f byte) Event { return events[min(int(f&3), len(events)-1)] }

func flagAvailability(f byte) pricewatch.Availability { return availabilities[(f>>2)&3] }

func encodeRaw(ev Event, a pricewatch.Availability, price float64, terms uint64) []byte {
	return appendRaw(make([]byte, 0, 12), ev, a, price, terms)
}

func appendRaw(b []byte, ev Event, a pricewatch.Availability, price float64, terms uint64) []byte {
	b = append(b, rowFlags(ev, a))
	b = appendFloat(b, price)
	return binary.AppendUvarint(b, terms)
}

// rawRow is a decoded raw history row.
type rawRow struct {
	flags byte
	price float64
	terms uint64
}

func decodeRaw(v []byte) (rawRow, error) {
	if len(v) < 10 || v[0]&rowMonth != 0 {
		return rawRow{}, fmt.Errorf("history row of %d bytes: not a raw row", len(v))
	}
	r := reader{b: v[1:]}
	row := rawRow{flags: v[0], price: r.float(), terms: r.uvarint()}
	return row, r.err
}

// dayRow is one compacted day of an offer.
type dayRow struct {
	day                    int // of the month, 1–31
	flags                  byte
	terms                  uint64
	open, low, high, close float64
}

// Day flags above the event and availability: the day's min or max is its
// open or close, and is not stored again.
const (
	dayLowOpen = 1 << (4 + iota)
	dayLowClose
	dayHighOpen
	dayHighClose
)

func appendDay(b []byte, d dayRow) []byte {
	f := d.flags & 0x0f
	switch d.low {
	case d.open:
		f |= dayLowOpen
	case d.close:
		f |= dayLowClose
	}
	switch d.high {
	case d.open:
		f |= dayHighOpen
	case d.close:
		f |= dayHighClose
	}
	b = append(b, byte(d.day), f)
	b = binary.AppendUvarint(b, d.terms)
	b = appendFloat(b, d.open)
	b = appendFloat(b, d.close)
	if f&(dayLowOpen|dayLowClose) == 0 {
		b = appendFloat(b, d.low)
	}
	if f&(dayHighOpen|dayHighClose) == 0 {
		b = appendFloat(b, d.high)
	}
	return b
}

func decodeMonth(v []byte) ([]dayRow, error) {
	if len(v) == 0 || v[0]&rowMonth == 0 {
		return nil, errors.New("history row: not a month row")
	}
	r := reader{b: v[1:]}
	var out []dayRow
	for len(r.b) > 0 && r.err == nil {
		d := dayRow{}
		head := r.bytes(2)
		if head == nil {
			break
		}
		d.day, d.flags = int(head[0]), head[1]&0x0f
		f := head[1]
		d.terms = r.uvarint()
		d.open, d.close = r.float(), r.float()
		switch {
		case f&dayLowOpen != 0:
			d.low = d.open
		case f&dayLowClose != 0:
			d.low = d.close
		default:
			d.low = r.float()
		}
		switch {
		case f&dayHighOpen != 0:
			d.high = d.open
		case f&dayHighClose != 0:
			d.high = d.close
		default:
			d.high = r.float()
		}
		out = append(out, d)
	}
	return out, r.err
}

// Terms are the parts of a history row that seldom change, stored once
// and referred to by id.
type terms struct {
	Card     string
	GPUs     int
	Currency string
	Stock    string
}

func encodeTerms(t terms) []byte {
	b := appendString(nil, t.Card)
	b = binary.AppendVarint(b, int64(t.GPUs))
	b = appendString(b, t.Currency)
	return appendString(b, t.Stock)
}

func decodeTerms(v []byte) (terms, error) {
	r := reader{b: v}
	t := terms{Card: r.str(), GPUs: int(r.varint()), Currency: r.str(), Stock: r.str()}
	return t, r.err
}

func idBytes(id uint32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, id)
	return b
}

// histKey is an offer id and a time.
func histKey(id uint32, t time.Time) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b, id)
	binary.BigEndian.PutUint64(b[4:], uint64(t.UnixNano()))
	return b
}

func keyTime(b []byte) time.Time { return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC() }
