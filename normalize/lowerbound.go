package normalize

import (
	"strings"

	"github.com/pricewatch/pricewatch"
)

// FormNotStated reports whether c is a lower-bound card: one that stands
// for the parts a name without its form factor or edition may be
// (data/cards.csv, "Form not stated"), with the slowest part's figures.
func FormNotStated(c pricewatch.Card) bool {
	return strings.HasPrefix(strings.ToLower(c.FormFactor), "not stated")
}

// FamilyModel is the model a person names c by: its model, without the
// "(form not stated)" a lower-bound card's model carries, so "H100" finds
// the H100 whose form no offer stated beside the PCIe and SXM parts.
func FamilyModel(c pricewatch.Card) string {
	if !FormNotStated(c) {
		return c.Model
	}
	if i := strings.LastIndex(c.Model, " ("); i > 0 && strings.HasSuffix(c.Model, "not stated)") {
		return c.Model[:i]
	}
	return c.Model
}
