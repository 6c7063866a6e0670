package rank

import (
	"maps"
	"slices"
	"strings"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
)

// Narrowing is what a user narrows offers by beyond card, mode and
// availability, as gpuhunt's and `sky show-gpus`' filters do: who sells,
// where, and what machine comes with the GPUs. Every list matches
// case-insensitively; empty fields keep every offer. A minimum on a detail
// an offer does not state (vCPUs, RAM) drops the offer: "at least 8" is not
// met by "unknown".
type Narrowing struct {
	// Providers keeps offers of these providers only; ExcludeProviders
	// drops these.
	Providers        []string `json:"provider,omitempty"`
	ExcludeProviders []string `json:"exclude_provider,omitempty"`
	// Regions keeps offers in these source regions; Countries in these
	// ISO 3166-1 alpha-2 countries (an offer with no known country fails).
	Regions   []string `json:"region,omitempty"`
	Countries []string `json:"country,omitempty"`
	// Interconnects keeps offers whose GPU-to-GPU link is of these families
	// (LinkFamily): the link the offer states, else the card's own.
	Interconnects []string `json:"interconnect,omitempty"`
	// MinGPUMemoryGB keeps cards with at least this memory per GPU (the
	// catalog's memory_gb).
	MinGPUMemoryGB float64 `json:"min_gpu_memory,omitempty"`
	// MinVCPUsPerGPU and MinRAMGBPerGPU keep offers whose stated vCPUs and
	// RAM divided by their GPUs reach these.
	MinVCPUsPerGPU float64 `json:"min_vcpus_per_gpu,omitempty"`
	MinRAMGBPerGPU float64 `json:"min_ram_gb_per_gpu,omitempty"`
}

// Active reports whether the narrowing drops anything.
func (n *Narrowing) Active() bool {
	return len(n.Providers)+len(n.ExcludeProviders)+len(n.Regions)+len(n.Countries)+len(n.Interconnects) > 0 ||
		n.MinGPUMemoryGB > 0 || n.MinVCPUsPerGPU > 0 || n.MinRAMGBPerGPU > 0
}

// LinkFamilies are the interconnect families a narrowing names.
var LinkFamilies = []string{"nvlink", "pcie", "infinity-fabric", "roce", "network"}

// LinkFamily is the family of a link: an offer's stated interconnect
// ("NVLink", "SXM", "PCIe 4.0") or a links.csv link id ("nvlink4-switch",
// "pcie4-host", "ifabric-cdna3", "gaudi2-roce"); "" when it names none.
func LinkFamily(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "":
		return ""
	case strings.HasPrefix(s, "nvlink"), strings.HasPrefix(s, "nvswitch"), strings.HasPrefix(s, "sxm"):
		// An SXM board's GPUs are joined by NVLink: that is what SXM is for.
		return "nvlink"
	case strings.HasPrefix(s, "pcie"), strings.HasPrefix(s, "pci"):
		return "pcie"
	case strings.HasPrefix(s, "ifabric"), strings.HasPrefix(s, "infinity"), strings.HasPrefix(s, "xgmi"):
		return "infinity-fabric"
	case strings.Contains(s, "roce"):
		return "roce"
	case strings.HasPrefix(s, "network"), strings.Contains(s, "infiniband"):
		return "network"
	}
	return ""
}

// Keep reports whether the narrowing keeps an offer (cat resolves its
// card's memory and link).
func (n *Narrowing) Keep(o *pricewatch.Offer, cat *normalize.Catalog) bool {
	if !n.Active() {
		return true
	}
	card, _ := cat.Card(o.Card)
	return n.keep(o.Provider, o.Region, o.Country, o.Interconnect, card, o.VCPUs, o.RAMGB, o.GPUs)
}

func (n *Narrowing) keep(provider, region, country, link string, card pricewatch.Card, vcpus, ram float64, gpus int) bool {
	if len(n.Providers) > 0 && !containsFold(n.Providers, provider) {
		return false
	}
	if containsFold(n.ExcludeProviders, provider) {
		return false
	}
	if len(n.Regions) > 0 && !containsFold(n.Regions, region) {
		return false
	}
	if len(n.Countries) > 0 && !containsFold(n.Countries, country) {
		return false
	}
	if len(n.Interconnects) > 0 {
		fam := LinkFamily(link)
		if fam == "" {
			fam = LinkFamily(card.Link.Name)
		}
		if !containsFold(n.Interconnects, fam) {
			return false
		}
	}
	if n.MinGPUMemoryGB > 0 && card.MemoryGB < n.MinGPUMemoryGB {
		return false
	}
	g := float64(max(gpus, 1))
	if n.MinVCPUsPerGPU > 0 && vcpus/g < n.MinVCPUsPerGPU {
		return false
	}
	if n.MinRAMGBPerGPU > 0 && ram/g < n.MinRAMGBPerGPU {
		return false
	}
	return true
}

func containsFold(list []string, s string) bool {
	if s == "" {
		return false
	}
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// packNarrowing is a narrowing applied to one pack's rows, the card of
// each dict entry looked up once.
type packNarrowing struct {
	n      *Narrowing
	p      *Pack
	cat    *normalize.Catalog
	active bool
	cards  map[uint32]pricewatch.Card
}

func (n *Narrowing) forPack(p *Pack, cat *normalize.Catalog) *packNarrowing {
	if cat == nil {
		cat = normalize.DefaultCatalog()
	}
	pn := &packNarrowing{n: n, p: p, cat: cat, active: n.Active()}
	if pn.active {
		pn.cards = map[uint32]pricewatch.Card{}
	}
	return pn
}

// keepRow reports whether the narrowing keeps row i of the pack.
func (pn *packNarrowing) keepRow(r *packRow) bool {
	if !pn.active {
		return true
	}
	card, ok := pn.cards[r.card]
	if !ok {
		card, _ = pn.cat.Card(pn.p.dict[r.card])
		pn.cards[r.card] = card
	}
	d, sh := pn.p.dict, &pn.p.shapes[r.shape]
	return pn.n.keep(d[sh.provider], d[sh.region], d[sh.country], d[sh.interconnect], card, sh.vcpus, sh.ramGB, int(r.gpus))
}

// Providers lists the providers of the snapshot's offers, sorted: what a
// provider narrowing can name. It is made once per snapshot (every
// /v1/best checks its query against it) and shared: callers must not
// modify it.
func (s *Snapshot) Providers() []string {
	s.provOnce.Do(func() {
		seen := map[string]bool{}
		for _, pt := range s.parts {
			for _, p := range pt.pack.providerNames() {
				seen[p] = true
			}
		}
		s.providers = slices.Sorted(maps.Keys(seen))
	})
	return s.providers
}

func (p *Pack) providerNames() []string {
	p.provOnce.Do(func() {
		idx := map[uint32]bool{}
		for i := range p.shapes { // every shape is some row's
			idx[p.shapes[i].provider] = true
		}
		for i := range idx {
			if p.dict[i] != "" {
				p.providers = append(p.providers, p.dict[i])
			}
		}
		slices.Sort(p.providers)
	})
	return p.providers
}

// Regions lists the regions of the snapshot's offers, sorted: what a
// region narrowing can name (exactly: Vast's "Texas, US" holds a comma).
func (s *Snapshot) Regions() []string {
	seen := map[string]bool{}
	for _, pt := range s.parts {
		p := pt.pack
		// Marks by dict index: a marketplace has about a shape per offer,
		// and hashing each one's region string was the cost.
		mark := make([]bool, len(p.dict))
		for i := range p.shapes {
			mark[p.shapes[i].region] = true
		}
		for i, m := range mark {
			if m && p.dict[i] != "" {
				seen[p.dict[i]] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// CardsNamed lists the canonical cards a person's name for a card denotes,
// sorted (nil: none), trying in turn, in any case and with separators and
// vendor words ignored: a canonical id ("h100-80gb-sxm", "RTX4090"); a
// model ("H100": its PCIe and SXM cards and the H100 whose form no
// offer stated, not the H100 NVL; "A100"); a generic or SkyPilot alias of
// one card ("H100 SXM"); a prefix of ids at a dash ("MI300X"). The id of
// a form-not-stated card names its family: "H100-80GB" is that card and
// the parts of its model and memory (H100-80GB-PCIE, H100-80GB-SXM).
func CardsNamed(cat *normalize.Catalog, name string) []string {
	want := squash(name)
	if want == "" {
		return nil
	}
	ids := cat.IDs()
	for _, id := range ids {
		if squash(id) != want {
			continue
		}
		c, _ := cat.Card(id)
		if !normalize.FormNotStated(c) {
			return []string{id}
		}
		var out []string // its family: the same model and memory
		for _, v := range ids {
			if p, _ := cat.Card(v); normalize.FamilyModel(p) == normalize.FamilyModel(c) && p.MemoryGB == c.MemoryGB {
				out = append(out, v)
			}
		}
		return out
	}
	var out []string
	for _, id := range ids {
		if c, _ := cat.Card(id); squash(normalize.FamilyModel(c)) == want {
			out = append(out, id)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, src := range []string{"*", "skypilot"} {
		if id, ok := cat.Resolve(src, name, 0); ok {
			return []string{id}
		}
	}
	prefix := strings.ToUpper(strings.TrimSpace(name)) + "-"
	for _, id := range ids {
		if strings.HasPrefix(strings.ToUpper(id), prefix) {
			out = append(out, id)
		}
	}
	return out
}

// squash is a name's matching form: normalize.Fold without the spaces.
func squash(s string) string { return strings.ReplaceAll(normalize.Fold(s), " ", "") }

// Vendors lists the catalog's card vendors in lower case, sorted: what an
// offer listing's vendor filter can name.
func Vendors(cat *normalize.Catalog) []string {
	seen := map[string]bool{}
	for _, id := range cat.IDs() {
		if c, _ := cat.Card(id); c.Vendor != "" {
			seen[strings.ToLower(c.Vendor)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
