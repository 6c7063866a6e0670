package rank

import (
	"fmt"

	"github.com/pricewatch/pricewatch"
)

// Layout is how a serving group of GPUs splits one copy of the model:
// TP-way tensor parallelism inside each of PP pipeline stages.
type Layout struct {
	TP int `json:"tp"`
	PP int `json:"pp"`
}

// GPUs is the group's size, TP × PP.
func (l Layout) GPUs() int { return max(l.TP, 1) * max(l.PP, 1) }

// String writes the layout as engines name it: "TP4", "PP2", "TP2×PP2".
func (l Layout) String() string {
	switch {
	case l.PP <= 1:
		return fmt.Sprintf("TP%d", max(l.TP, 1))
	case l.TP <= 1:
		return fmt.Sprintf("PP%d", l.PP)
	}
	return fmt.Sprintf("TP%d×PP%d", l.TP, l.PP)
}

// layoutsFor are the layouts of a serving group of g GPUs (a power of
// two): tensor parallel over all of them, pipeline parallel over all, and
// the mixes between (TP inside each stage).
func layoutsFor(g int) []Layout {
	out := []Layout{{TP: g, PP: 1}}
	for pp := 2; pp <= g; pp *= 2 {
		out = append(out, Layout{TP: g / pp, PP: pp})
	}
	return out
}

// ActivationBytes is the size of one activation value tensor-parallel
// all-reduces carry: 16 bits, also in fp8 and fp4 engines (their GEMMs
// take quantized inputs, the residual stream stays 16-bit).
const ActivationBytes = 2

// linkRate is the bytes per second a collective over the link moves per
// GPU: the per-direction rate × the calibrated link efficiency, halved where transfers are staged through host memory (no
// peer-to-peer: every byte crosses PCIe twice).
func linkRate(l pricewatch.Link, k constants) float64 {
	r := l.GBsPerDirection * 1e9 * k.linkEff
	if !l.P2P {
		r /= 2
	}
	return r
}

// Collective kinds by the share of the buffer a ring moves per GPU:
// all-gather and reduce-scatter (g−1)/g, all-reduce twice that.
const (
	gatherFactor = 1.0
	reduceFactor = 2.0
)

// collectiveSeconds is one collective of size bytes over g GPUs of the
// card, and the link it is bound by. Within the card's link domain (one
// NVSwitch board, one PCIe host) it is a ring over that link: its latency
// plus factor × (g−1)/g of the bytes at linkRate. A larger group is
// hierarchical, as NCCL builds it on rail-optimized clusters: the ring
// inside each domain of d GPUs, then across the n domains over the next
// link, where each of a domain's d GPUs carries 1/d of the traffic, factor
// × (n−1)/n × bytes/d. ok is false when no link of the card joins g GPUs.
func collectiveSeconds(c pricewatch.Card, g int, bytes, factor float64, k constants) (float64, string, bool) {
	if g <= 1 {
		return 0, "", true
	}
	l, ok := c.LinkFor(g)
	if !ok {
		return 0, "", false
	}
	inner, okInner := c.LinkFor(1)
	if !okInner || inner.Name == l.Name {
		return l.LatencyUS*1e-6 + factor*float64(g-1)/float64(g)*bytes/linkRate(l, k), l.Name, true
	}
	d := inner.DomainGPUs
	n := (g + d - 1) / d
	t := inner.LatencyUS*1e-6 + factor*float64(d-1)/float64(d)*bytes/linkRate(inner, k)
	t += l.LatencyUS*1e-6 + factor*float64(n-1)/float64(n)*bytes/float64(d)/linkRate(l, k)
	return t, l.Name, true
}
