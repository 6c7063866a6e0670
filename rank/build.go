package rank

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// Building a snapshot: each pack ranked into a part (exclusions, cost per
// row and workload, the cheapest row per group), then the parts merged.

// why codes: the exclusion reasons as small numbers.
var (
	whyMu    sync.Mutex
	whyCodes = map[string]uint8{"": 0}
	whyNames = []string{""}
)

func whyCode(s string) uint8 {
	whyMu.Lock()
	defer whyMu.Unlock()
	if c, ok := whyCodes[s]; ok {
		return c
	}
	if len(whyNames) >= 255 {
		return 255
	}
	c := uint8(len(whyNames))
	whyNames = append(whyNames, s)
	whyCodes[s] = c
	return c
}

func whyName(c uint8) string {
	whyMu.Lock()
	defer whyMu.Unlock()
	if int(c) < len(whyNames) {
		return whyNames[c]
	}
	return "other"
}

var (
	codeReference   = whyCode(WhyReference)
	codeUnknown     = whyCode(WhyUnknownCard)
	codeShared      = whyCode(WhyShared)
	codeReliability = whyCode(WhyReliability)
	codeStale       = whyCode(WhyStale)
	codeDuplicate   = whyCode(WhyDuplicate)
	codeNoUnit      = whyCode(WhyNoUnit)
	codeNoRate      = whyCode(WhyNoRate)
	codeNoProfile   = whyCode(WhyNoProfile)
	codeUnavailable = whyCode(WhyUnavailable)
)

// Build ranks offers for each workload. Profiles give tokens/s per card and
// workload (a measured one wins over published, published over estimated;
// one measured on the offer or its provider over a card-wide one).
func Build(offers []pricewatch.Offer, profiles []Profile, workloads []Workload, cat *normalize.Catalog, opt Options) *Snapshot {
	return BuildPacks(PackOffers(offers), profiles, workloads, cat, opt, nil)
}

// BuildPacks ranks packs (one per source) for each workload, like Build.
// Parts of prev (a snapshot built from some of the same packs) are reused
// where the pack, the inputs and the freshness of its offers are the same,
// so a run of one source re-ranks only that source.
func BuildPacks(packs []*Pack, profiles []Profile, workloads []Workload, cat *normalize.Catalog, opt Options, prev *Snapshot) *Snapshot {
	s := &Snapshot{
		GeneratedAt: opt.Now, Base: strings.ToUpper(opt.Base), Rates: opt.Rates, StaleAfter: opt.StaleAfter,
		opt: opt, cat: cat, workloads: map[string]Workload{}, wl: workloads, wlIndex: map[string]int{},
	}
	if s.Base == "" {
		s.Base = "USD"
	}
	s.in = &inputs{profiles: profiles, ws: workloads, cat: cat, floor: opt.ReliabilityFloor, base: s.Base, rates: opt.Rates}
	if prev != nil && prev.in.same(s.in) {
		s.in = prev.in
		s.profiles, s.norms, s.Norms = prev.profiles, prev.norms, prev.Norms
	} else {
		s.profiles = newProfileSet(profiles)
		s.norms = map[string]NormCheck{}
		s.Norms = CheckNorms(profiles, workloads, cat)
		for _, c := range s.Norms {
			s.norms[c.Key()] = c
		}
	}
	for i, w := range workloads {
		s.workloads[w.Name] = w
		s.wlIndex[w.Name] = i
	}
	packs = slices.Clone(packs)
	slices.SortStableFunc(packs, func(a, b *Pack) int { return strings.Compare(a.source, b.source) })
	s.direct = map[string]bool{}
	for _, p := range packs {
		for _, d := range p.direct {
			s.direct[d] = true
		}
	}
	old := map[*Pack]*part{}
	if prev != nil {
		for _, pt := range prev.parts {
			old[pt.pack] = pt
		}
	}
	now := unixNanos(opt.Now)
	s.parts = make([]*part, len(packs))
	var todo []int
	for i, p := range packs {
		s.count += p.Len()
		if pt, ok := old[p]; ok && pt.valid(s, now) {
			s.parts[i] = pt
			continue
		}
		todo = append(todo, i)
	}
	// A large pack is ranked on two goroutines (by workload); small ones
	// are not worth it.
	if len(todo) > 0 {
		s.shapes = make([]map[shapeKey]shapeResult, len(workloads))
		for wi := range s.shapes {
			s.shapes[wi] = map[shapeKey]shapeResult{}
		}
	}
	for _, i := range todo {
		s.parts[i] = s.rankPart(packs[i])
	}
	s.shapes = nil
	s.merge()
	return s
}

// valid reports whether a part of an earlier snapshot holds for s.
func (pt *part) valid(s *Snapshot, now int64) bool {
	if pt.in != s.in || pt.staleAfter != s.opt.StaleAfter[pt.pack.source] || now < pt.from || (pt.until != 0 && now >= pt.until) {
		return false
	}
	for d, v := range pt.deps {
		if s.direct[d] != v {
			return false
		}
	}
	return true
}

// conv converts prices of one currency to the base currency exactly as
// Rates.Convert does.
type conv struct {
	ok, same bool
	rf, rt   float64
}

func (s *Snapshot) convOf(cur string) conv {
	from, to := strings.ToUpper(cur), s.Base
	if from == to {
		return conv{ok: true, same: true}
	}
	r := s.opt.Rates
	if r == nil {
		return conv{}
	}
	rf, ok1 := rateOf(r, from)
	rt, ok2 := rateOf(r, to)
	if !ok1 || !ok2 {
		return conv{}
	}
	return conv{ok: true, rf: rf, rt: rt}
}

// rateOf is pricewatch.Rates' rate of an upper-case currency.
func rateOf(r *pricewatch.Rates, cur string) (float64, bool) {
	if cur == strings.ToUpper(r.Base) {
		return 1, true
	}
	v, ok := r.Rates[cur]
	return v, ok && v > 0
}

func (c conv) apply(v float64) float64 {
	switch {
	case !c.ok:
		return math.NaN()
	case c.same:
		return v
	}
	return v / c.rf * c.rt
}

// shape is what a workload's rental and throughput on a row depend on.
type shape struct {
	card, counts, rentUnit uint32
}

type shapeResult struct {
	done bool
	why  uint8
	gpus int
	tps  float64
}

// shapeKey is a shape by value (card id, GPU counts, rent unit): the same
// in every pack, so one snapshot build evaluates it once per workload for
// all its parts.
type shapeKey struct {
	card, counts, rentUnit string
}

func countsKey(c []int) string {
	b := make([]byte, 0, 4*len(c))
	for _, n := range c {
		b = append(b, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	return string(b)
}

// rankPart ranks one pack for every workload.
func (s *Snapshot) rankPart(p *Pack) *part {
	n := len(p.rows)
	lim := s.opt.StaleAfter[p.source]
	now := unixNanos(s.opt.Now)
	pt := &part{pack: p, in: s.in, staleAfter: lim, from: now, deps: map[string]bool{},
		base: make([]float64, n), why: make([]uint8, n), wl: make([]partWL, len(s.wl))}
	// Per dict entry: the card, the currency conversion.
	type cardOf struct {
		done, ok bool
		card     pricewatch.Card
	}
	cards := make([]cardOf, len(p.dict))
	convs := make([]*conv, len(p.dict))
	card := func(i uint32) (pricewatch.Card, bool) {
		c := &cards[i]
		if !c.done {
			c.done = true
			if id := p.dict[i]; id != "" {
				c.card, c.ok = s.cat.Card(id)
			}
		}
		return c.card, c.ok
	}
	shapes := map[shape]int32{}
	var shapeList []shape
	var shapeKeys []shapeKey
	shapeOf := make([]int32, n)
	// Rows measured on their own provider (or offer) are priced one by one.
	specific := map[string]bool{}
	for _, sp := range s.profiles.specific {
		specific[sp.Provider] = true
	}
	for i := range p.rows {
		r := &p.rows[i]
		sh := &p.shapes[r.shape]
		c := convs[sh.currency]
		if c == nil {
			cv := s.convOf(p.dict[sh.currency])
			c = &cv
			convs[sh.currency] = c
		}
		pt.base[i] = c.apply(r.price)
		seen := p.times[r.times].observedAt
		stale := lim > 0 && now-seen > int64(lim)
		if lim > 0 && !stale {
			if u := seen + int64(lim) + 1; pt.until == 0 || u < pt.until {
				pt.until = u
			}
		}
		provider, mode := p.dict[sh.provider], p.dict[r.mode]
		if p.source != provider {
			d := provider + "\x00" + mode
			pt.deps[d] = s.direct[d]
		}
		_, known := card(r.card)
		var why uint8
		switch {
		case p.dict[sh.kind] == string(pricewatch.KindReference):
			why = codeReference
			if p.dict[r.card] != "" && !stale {
				pt.refs = append(pt.refs, int32(i))
			}
		case p.dict[r.card] == "" || !known:
			why = codeUnknown
		case r.flags&rowShared != 0:
			why = codeShared
		case r.flags&rowHasRel != 0 && r.rel < s.opt.ReliabilityFloor:
			why = codeReliability
		case stale:
			why = codeStale
		case p.source != provider && s.direct[provider+"\x00"+mode]:
			why = codeDuplicate
		case p.dict[sh.rentUnit] == "" || len(p.counts[sh.counts]) == 0:
			why = codeNoUnit
		case math.IsNaN(pt.base[i]):
			why = codeNoRate
		}
		pt.why[i] = why
		shapeOf[i] = -1
		if why == 0 && !specific[provider] {
			rs := shape{r.card, sh.counts, sh.rentUnit}
			id, ok := shapes[rs]
			if !ok {
				id = int32(len(shapeList))
				shapes[rs] = id
				shapeList = append(shapeList, rs)
				shapeKeys = append(shapeKeys, shapeKey{p.dict[r.card], countsKey(p.counts[sh.counts]), p.dict[sh.rentUnit]})
			}
			shapeOf[i] = id
		}
	}
	rankWL := func(wi int) {
		w := s.wl[wi]
		res := make([]shapeResult, len(shapeList))
		// Each workload's results are filled by one goroutine at a time
		// (parts are ranked one after another).
		shared := s.shapes[wi]
		pt.wl[wi] = partWL{cost: make([]float64, n), gpus: make([]uint16, n), ex: make([]int32, 32), best: map[uint64]int32{}}
		wl := &pt.wl[wi]
		count := func(c uint8) {
			if int(c) >= len(wl.ex) {
				wl.ex = append(wl.ex, make([]int32, int(c)-len(wl.ex)+1)...)
			}
			wl.ex[c]++
		}
		eval := func(r *packRow) shapeResult {
			cd, _ := card(r.card)
			prec, ok := PrecisionOn(w, cd)
			if !ok {
				return shapeResult{done: true, why: whyCode(prec.Code)}
			}
			sh := &p.shapes[r.shape]
			pr, ok := s.profiles.lookup(p.dict[r.card], w.Name, p.dict[sh.provider], p.str(r.offerID))
			if !ok || pr.TokensPerSecond <= 0 {
				return shapeResult{done: true, why: codeNoProfile}
			}
			o := pricewatch.Offer{GPUCounts: p.counts[sh.counts], RentUnit: pricewatch.RentUnit(p.dict[sh.rentUnit])}
			rt, pr, why := RentalFor(w, cd, o, MaxMaxGPUs, pr)
			if why != "" {
				return shapeResult{done: true, why: whyCode(why)}
			}
			return shapeResult{done: true, gpus: rt.GPUs, tps: rt.TokensPerSecond(pr.TokensPerSecond)}
		}
		for i := range p.rows {
			r := &p.rows[i]
			wl.cost[i] = math.NaN()
			if c := pt.why[i]; c != 0 {
				count(c)
				continue
			}
			var sr shapeResult
			if id := shapeOf[i]; id >= 0 {
				if !res[id].done {
					k := shapeKeys[id]
					sr, ok := shared[k]
					if !ok {
						sr = eval(r)
						shared[k] = sr
					}
					res[id] = sr
				}
				sr = res[id]
			} else {
				sr = eval(r)
			}
			if sr.why != 0 {
				count(sr.why)
				continue
			}
			price := pt.base[i]
			wl.cost[i] = CostPerMillionTokens(price*float64(sr.gpus), sr.tps)
			wl.gpus[i] = uint16(min(sr.gpus, math.MaxUint16))
			out := p.dict[r.avail] == string(pricewatch.AvailableNo)
			if out {
				count(codeUnavailable) // ranked, but left out of answers by default
			}
			g := uint64(r.card)<<32 | uint64(r.mode)<<17 | uint64(wl.gpus[i])<<1
			if out {
				g |= 1
			}
			if b, ok := wl.best[g]; !ok || pt.lessRow(wi, int32(i), b) {
				wl.best[g] = int32(i)
			}
		}
	}
	if n >= 20_000 && len(s.wl) > 1 {
		var wg sync.WaitGroup
		half := len(s.wl) / 2
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wi := half; wi < len(s.wl); wi++ {
				rankWL(wi)
			}
		}()
		for wi := 0; wi < half; wi++ {
			rankWL(wi)
		}
		wg.Wait()
	} else {
		for wi := range s.wl {
			rankWL(wi)
		}
	}
	return pt
}

// lessRow orders two rows of the part as less orders their entries: by
// cost, then price, then key (the source is the same).
func (pt *part) lessRow(wi int, a, b int32) bool {
	c := pt.wl[wi].cost
	if c[a] != c[b] {
		return c[a] < c[b]
	}
	if pt.base[a] != pt.base[b] {
		return pt.base[a] < pt.base[b]
	}
	return pt.pack.Key(int(a)) < pt.pack.Key(int(b))
}

// merge sums the parts' exclusions and keeps the cheapest row per group.
func (s *Snapshot) merge() {
	s.merged = make([]mergedWL, len(s.wl))
	for wi := range s.wl {
		m := &s.merged[wi]
		m.ex = Exclusions{}
		type gk struct {
			card, mode string
			gpus       int
			out        bool
		}
		groups := map[gk]int{}
		for pi, pt := range s.parts {
			wl := &pt.wl[wi]
			for c, n := range wl.ex {
				if n > 0 {
					m.ex[whyName(uint8(c))] += int(n)
				}
			}
			p := pt.pack
			for g, row := range wl.best {
				r := &p.rows[row]
				k := gk{p.dict[r.card], p.dict[r.mode], int(g>>1) & 0xffff, g&1 != 0}
				if j, ok := groups[k]; !ok {
					groups[k] = len(m.groups)
					m.groups = append(m.groups, groupBest{card: k.card, mode: k.mode, gpus: k.gpus, out: k.out, part: int32(pi), row: row})
				} else if gb := &m.groups[j]; s.lessAt(wi, int32(pi), row, gb.part, gb.row) {
					gb.part, gb.row = int32(pi), row
				}
			}
		}
	}
}
