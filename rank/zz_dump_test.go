package rank

import (
	"fmt"
	"os"
	"sort"
	"testing"
)

func TestZZDumpLOPO(t *testing.T) {
	out := os.Getenv("DUMP_LOPO")
	if out == "" {
		t.Skip()
	}
	lo := lopo()
	rows := priced()
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	f, _ := os.Create(out)
	defer f.Close()
	for _, m := range rows {
		fmt.Fprintf(f, "%s %s %d %d %d %.3f\n", m.ID, m.Publisher, m.GPUs, m.TP, m.PP, lo[m.ID])
	}
}
