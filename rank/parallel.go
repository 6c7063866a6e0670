package rank

import (
	"fmt"

	"github.com/pricewatch/pricewatch"
)

// Layout is how a serving group of GPUs splits the model: DP replicas of
// PP pipeline stages, each stage TP-way tensor parallel; a
// mixture-of-experts spreads its routed experts over EP GPUs of a stage
// (EP ≤ TP × DP; 0 or 1: the experts are split like the rest, tensor
// parallel).
type Layout struct {
	TP int `json:"tp"`
	PP int `json:"pp"`
	EP int `json:"ep,omitempty"`
	DP int `json:"dp,omitempty"`
}

// GPUs is the group's size, TP × PP × DP.
func (l Layout) GPUs() int { return max(l.TP, 1) * max(l.PP, 1) * max(l.DP, 1) }

// norm is the layout with every degree at least 1.
func (l Layout) norm() Layout {
	return Layout{TP: max(l.TP, 1), PP: max(l.PP, 1), EP: max(l.EP, 1), DP: max(l.DP, 1)}
}

// String writes the layout as engines name it: "TP4", "PP2", "TP2×PP2",
// "TP8 EP8", "DP8 EP8".
func (l Layout) String() string {
	n := l.norm()
	var s string
	switch {
	case n.PP == 1:
		s = fmt.Sprintf("TP%d", n.TP)
	case n.TP == 1:
		s = fmt.Sprintf("PP%d", n.PP)
	default:
		s = fmt.Sprintf("TP%d×PP%d", n.TP, n.PP)
	}
	if n.DP > 1 {
		if n.TP == 1 && n.PP == 1 {
			s = fmt.Sprintf("DP%d", n.DP)
		} else {
			s = fmt.Sprintf("DP%d×%s", n.DP, s)
		}
	}
	if n.EP > 1 {
		s += fmt.Sprintf(" EP%d", n.EP)
	}
	return s
}

// validFor reports why the layout cannot run on the card ("" when it can):
// EP must divide the GPUs of a stage, and a group must fit the card's
// links.
func (l Layout) validFor(m Model, c pricewatch.Card) string {
	n := l.norm()
	if n.EP > 1 && !m.MoE() {
		return "ep: the model has no experts to spread"
	}
	if n.EP > 1 && (n.TP*n.DP)%n.EP != 0 {
		return fmt.Sprintf("ep: %d does not divide the %d GPUs of a stage (tp × dp)", n.EP, n.TP*n.DP)
	}
	if _, ok := c.LinkFor(l.GPUs()); !ok && l.GPUs() > 1 {
		return fmt.Sprintf("no link of %s joins %d GPUs", c.ID, l.GPUs())
	}
	return ""
}

// DefaultLayout is the layout an engine runs on g GPUs when it is told no
// other: tensor parallel within the card's link domain (one NVSwitch board
// or PCIe host), pipeline stages only across domains (vLLM's and
// TensorRT-LLM's multi-node recipes), and for a mixture-of-experts the
// experts spread over each stage's GPUs (expert parallel).
func DefaultLayout(m Model, c pricewatch.Card, g int) Layout {
	g = max(g, 1)
	d := c.Link.DomainGPUs
	if d <= 0 || d > g {
		d = g
	}
	for g%d != 0 { // a domain that does not divide the group: the largest power of two that does
		d /= 2
	}
	l := Layout{TP: d, PP: g / d}
	if m.MoE() && d > 1 {
		l.EP = d
	}
	return l
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
