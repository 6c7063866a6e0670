package rank

// CardCounts is the number of current offers of each card (reference
// rows included; offers without a card left out), read from the packs'
// per-card listing indexes: the lengths of their lists, not a decode of
// every offer. The offer browser's card selector asks for it on every
// page; at 100k offers decoding them all was most of the page's time.
func (s *Snapshot) CardCounts() map[string]int {
	out := map[string]int{}
	for _, pt := range s.parts {
		p := pt.pack
		for card, rows := range p.index().byCard {
			if name := p.dict[card]; name != "" {
				out[name] += len(rows)
			}
		}
	}
	return out
}
