package rank

import (
	"strings"
	"testing"
)

func TestParseBilling(t *testing.T) {
	const head = "# comment\nprovider,mode,offer_prefix,rule,value,basis,source,read,note\n"
	for _, c := range []struct {
		name, row string
		read      string // the row's read date when accepted
		err       string // a part of the error when refused
	}{
		{"EmptyReadAccepted", `x,*,*,increment_seconds,1,default,,,"No page."`, "", ""},
		{"DateAccepted", `x,*,*,increment_seconds,1,stated,https://x.example/p,2026-12-04,"""Per second."""`, "2026-12-04", ""},
		{"BadDateRefused", `x,*,*,increment_seconds,1,stated,https://x.example/p,04/12/2026,note`, "", "read"},
		{"ImpossibleDateRefused", `x,*,*,increment_seconds,1,stated,https://x.example/p,2026-13-01,note`, "", "read"},
		{"BadBasisRefused", `x,*,*,increment_seconds,1,guessed,,,note`, "", "basis"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := parseBilling([]byte(head + c.row + "\n"))
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err %v, want one about %s", err, c.err)
				}
			case err != nil || len(rows) != 1 || rows[0].read != c.read || rows[0].rule != "increment_seconds":
				t.Errorf("rows %+v, err %v", rows, err)
			}
		})
	}
	// The embedded table parses, with the read column.
	rows, err := parseBilling(billingCSV)
	if err != nil || len(rows) < 20 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}
