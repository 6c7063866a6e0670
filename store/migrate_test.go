package store_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/internal/testfile"
	"github.com/pricewatch/pricewatch/store"
)

// V1Answers are what the schema-1 code answered from testdata/v1.db.gz
// (written by it: see testdata/README.md).
type V1Answers struct {
	Now          time.Time                  `json:"now"`
	Answers      map[string]json.RawMessage `json:"answers"`
	Offers       json.RawMessage            `json:"offers"`
	History      map[string]json.RawMessage `json:"history"`
	Changes      json.RawMessage            `json:"changes"`
	Availability map[string]float64         `json:"availability"`
	Health       json.RawMessage            `json:"health"`
	Runs         map[string]json.RawMessage `json:"runs"`
	Rates        json.RawMessage            `json:"rates"`
	HistoryCount int                        `json:"history_count"`
}

// v1Copy writes the schema-1 database into a temporary folder.
func v1Copy(t *testing.T) (string, V1Answers) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(path, testfile.Gunzip(t, filepath.Join("testdata", "v1.db.gz")), 0o600); err != nil {
		t.Fatal(err)
	}
	var a V1Answers
	if err := json.Unmarshal(testfile.Gunzip(t, filepath.Join("testdata", "v1-answers.json.gz")), &a); err != nil {
		t.Fatal(err)
	}
	return path, a
}

// sameJSON compares a value with the JSON the schema-1 code wrote.
func sameJSON(t *testing.T, what string, got any, want json.RawMessage) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		if len(b) > 600 {
			b = b[:600]
		}
		if len(want) > 600 {
			want = want[:600]
		}
		t.Errorf("%s differs from schema 1:\n got  %s\n want %s", what, b, want)
	}
}

func TestMigrateV1_SameAnswers(t *testing.T) {
	path, want := v1Copy(t)
	if _, err := store.Open(path, store.Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only open of a schema-1 file succeeded; it cannot be read without migrating")
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	offers, err := st.Offers()
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "offers", offers, want.Offers)
	var keys []string
	for k := range want.History {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h, err := st.History(k)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "history of "+k, h, want.History[k])
	}
	ch, err := st.Changes(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "changes", ch, want.Changes)
	av, err := st.Availability(keys, want.Now.Add(-7*24*time.Hour), want.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(av, want.Availability) {
		t.Errorf("availability differs: %d shares, want %d", len(av), len(want.Availability))
	}
	h, err := st.Health()
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "health", h, want.Health)
	for src, w := range want.Runs {
		r, err := st.Runs(src, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "runs of "+src, r, w)
	}
	r, err := st.Rates()
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "rates", r, want.Rates)
	if n, _ := st.HistoryCount(); n != want.HistoryCount {
		t.Errorf("history rows = %d, want %d", n, want.HistoryCount)
	}
	// Reopening a migrated file migrates nothing again.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	again, err := st2.Offers()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(again)
	b, _ := json.Marshal(offers)
	if !bytes.Equal(a, b) {
		t.Error("offers differ after reopening")
	}
}
