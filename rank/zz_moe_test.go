package rank

import (
	"fmt"
	"testing"
)

func TestZZMoERows(t *testing.T) {
	for _, m := range priced() {
		if m.Preset == "" {
			continue
		}
		got, err := rowEstimate(m, calibrated)
		rs, _ := rowJob(m)
		c, _ := catalog().Card(m.Card)
		lay := rs.layout
		if lay == (Layout{}) {
			lay = DefaultLayout(rs.w.Model, c, rs.gpus)
		}
		s, prec, ok := servingCaseFor(rs.w, c, calibrated)
		var r servingResult
		if ok {
			s.layout = lay
			r = servingRate(c, s)
		}
		tot := r.prefillT + max(r.computeT, r.weightsT) + r.kvT + r.commT
		fmt.Printf("%-58s %-7s %5.2f %-10s %-12s seq %6.0f tch %.2f | pre %.2f cmp %.2f wts %.2f kv %.2f comm %.2f %s %v\n", m.ID, m.Split, got/m.TokensPerSecond, prec.Name, lay, r.seqs, r.touched,
			r.prefillT/tot, r.computeT/tot, r.weightsT/tot, r.kvT/tot, r.commT/tot, rs.w.Engine, err)
	}
}
