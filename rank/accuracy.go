package rank

import (
	_ "embed"
	"fmt"
	"strconv"
	"sync"

	"github.com/pricewatch/pricewatch"
)

//go:embed data/accuracy.csv
var accuracyCSV []byte

// Accuracy is how far off estimates of one kind were on published
// measurements, leave one publisher out (data/accuracy.csv): what a
// reader should allow for around a figure.
type Accuracy struct {
	Subset string `json:"subset"`
	What   string `json:"what"`
	// Rows measurements of the kind; Within of them priced within ±35%.
	Rows   int `json:"rows"`
	Within int `json:"within_35_percent"`
	// MedianRatio is the median of estimate ÷ measured.
	MedianRatio float64 `json:"median_estimate_over_measured"`
	Basis       string  `json:"basis"`
}

// Share is Within as a share of Rows.
func (a Accuracy) Share() float64 { return float64(a.Within) / float64(max(a.Rows, 1)) }

// String is the accuracy as one line for people.
func (a Accuracy) String() string {
	return fmt.Sprintf("within ±35%% of the measured rate on %.0f%% of %d published runs of its kind (%s; median estimate ÷ measured %.2f; leave one publisher out)",
		100*a.Share(), a.Rows, a.What, a.MedianRatio)
}

const accuracyBasis = "published measurements priced leave one publisher out (rank/THROUGHPUT.md)"

var accuracyTable = sync.OnceValue(func() map[string]Accuracy {
	out := map[string]Accuracy{}
	for _, row := range readTable(accuracyCSV) {
		n, err1 := strconv.Atoi(row[1])
		w, err2 := strconv.Atoi(row[2])
		med, err3 := strconv.ParseFloat(row[3], 64)
		if err1 != nil || err2 != nil || err3 != nil || n <= 0 || w < 0 || w > n || !(med > 0) {
			panic(fmt.Sprintf("rank: data/accuracy.csv: row %v", row))
		}
		out[row[0]] = Accuracy{Subset: row[0], Rows: n, Within: w, MedianRatio: med, What: row[4], Basis: accuracyBasis}
	}
	return out
})

// AccuracyOf is the accuracy of an estimate of w on gpus GPUs of c: its
// kind's row of data/accuracy.csv (training; serving on a consumer card;
// serving a mixture-of-experts model, on an AMD card or on any; dense
// serving on one GPU or more). AMD's MoE runs have their own row: the
// estimates there err far more, and in both directions, than the
// all-card figure says.
func AccuracyOf(w Workload, c pricewatch.Card, gpus int) (Accuracy, bool) {
	subset := "training"
	switch {
	case w.Method != MethodServe:
	case c.EstimatorClass == "consumer":
		subset = "consumer-serving"
	case w.Model.MoE() && amdCard(c):
		subset = "moe-serving-amd"
	case w.Model.MoE():
		subset = "moe-serving"
	case gpus <= 1:
		subset = "serving-1gpu"
	default:
		subset = "serving-multi-gpu"
	}
	a, ok := accuracyTable()[subset]
	return a, ok
}

// amdCard is a card whose MoE estimates report AMD's own accuracy row.
func amdCard(c pricewatch.Card) bool { return c.Vendor == "AMD" }
