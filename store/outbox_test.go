package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pricewatch/pricewatch/store"
)

func msg(text string, at time.Time) store.Message {
	return store.Message{Kind: "change", Text: text, Payload: []byte(`{"text":"` + text + `"}`), Created: at}
}

func texts(ms []store.Message) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ","
		}
		s += m.Text
	}
	return s
}

// The status index follows every change of status: the next pending
// message, the counts and the lists by status agree with the messages.
func TestOutbox_Index(t *testing.T) {
	st := mustOpen(t)
	ids := map[string]uint64{}
	for i, s := range []string{"a", "b", "c", "d", "e"} {
		id, err := st.Enqueue(msg(s, t0.Add(time.Duration(i)*time.Minute)))
		if err != nil {
			t.Fatal(err)
		}
		ids[s] = id
	}
	set := func(s, status string) {
		t.Helper()
		ms, _ := st.Messages(0)
		for _, m := range ms {
			if m.ID == ids[s] {
				m.Status = status
				if err := st.UpdateMessage(m); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatalf("no message %s", s)
	}
	set("a", store.Sent)
	set("b", store.Failed)
	set("d", store.Failed)
	set("d", store.Failed) // again: counted once
	next, err := st.NextPending()
	if err != nil || next == nil || next.Text != "c" {
		t.Fatalf("next pending %+v %v, want c", next, err)
	}
	for _, c := range []struct {
		status string
		limit  int
		want   string
	}{
		{"", 0, "e,d,c,b,a"},
		{"", 2, "e,d"},
		{store.Pending, 0, "e,c"},
		{store.Failed, 1, "d"},
		{store.Failed, 0, "d,b"},
		{store.Sent, 0, "a"},
	} {
		page, err := st.Outbox(c.status, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(page.Messages); got != c.want || page.Pending != 2 || page.Failed != 2 {
			t.Errorf("Outbox(%q, %d) = %s (pending %d, failed %d), want %s (2, 2)", c.status, c.limit, got, page.Pending, page.Failed, c.want)
		}
	}
	set("c", store.Sent)
	set("d", store.Sent)
	if next, _ := st.NextPending(); next == nil || next.Text != "e" {
		t.Errorf("next pending %+v, want e", next)
	}
	set("e", store.Sent)
	if next, _ := st.NextPending(); next != nil {
		t.Errorf("next pending %+v, want none", next)
	}
	if page, _ := st.Outbox("", 0); page.Pending != 0 || page.Failed != 1 {
		t.Errorf("counts %d pending, %d failed, want 0, 1", page.Pending, page.Failed)
	}
}

// A logged message (no Slack configured) has its own status: listed under
// it and not under sent, done like a sent one (not pending, pruned). Before
// Logged existed the sender marked such messages sent; with the status
// stored but the list unchanged, Outbox(sent) gave "c,b,a" and
// Outbox(logged) "d,c,b,a": the unindexed statuses were not told apart.
func TestOutbox_LoggedIsItsOwnStatus(t *testing.T) {
	st := mustOpen(t)
	var ms []store.Message
	for i, s := range []string{"a", "b", "c", "d"} {
		m := msg(s, t0.Add(time.Duration(i)*time.Minute))
		id, err := st.Enqueue(m)
		if err != nil {
			t.Fatal(err)
		}
		m.ID = id
		ms = append(ms, m)
	}
	for i, status := range []string{store.Sent, store.Logged, store.Logged} {
		ms[i].Status = status
		if err := st.UpdateMessage(ms[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		status string
		limit  int
		want   string
	}{
		{store.Logged, 0, "c,b"},
		{store.Logged, 1, "c"},
		{store.Sent, 0, "a"},
		{store.Pending, 0, "d"},
		{"", 0, "d,c,b,a"},
	} {
		page, err := st.Outbox(c.status, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(page.Messages); got != c.want || page.Pending != 1 || page.Failed != 0 {
			t.Errorf("Outbox(%q, %d) = %s (pending %d, failed %d), want %s (1, 0)", c.status, c.limit, got, page.Pending, page.Failed, c.want)
		}
	}
	if next, _ := st.NextPending(); next == nil || next.Text != "d" {
		t.Errorf("next pending %+v, want d", next)
	}
	// Messages a, b, c were created before t0+10m, d too, but d is pending.
	if n, err := st.PruneMessages(t0.Add(10 * time.Minute)); err != nil || n != 3 {
		t.Errorf("pruned %d (%v), want 3: a sent, b and c logged", n, err)
	}
}

// Pruning drops sent and failed messages created before the time, in
// batches, and keeps pending and newer ones; the counts follow.
func TestOutbox_Prune(t *testing.T) {
	st := mustOpen(t)
	var all []store.Message
	for i := range 2500 {
		all = append(all, msg(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Second)))
	}
	if _, err := st.Decide("bulk", func([]byte) (any, []store.Message, error) { return nil, all, nil }); err != nil {
		t.Fatal(err)
	}
	ms, _ := st.Messages(0)
	for _, m := range ms {
		switch {
		case m.Text == "5": // an old pending message is kept
		case m.Text == "7" || m.Text == "2400":
			m.Status = store.Failed
		default:
			m.Status = store.Sent
		}
		if err := st.UpdateMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.PruneMessages(t0.Add(2200 * time.Second))
	if err != nil || n != 2199 {
		t.Fatalf("pruned %d (%v), want 2199 (messages 0..2199 but the pending one)", n, err)
	}
	page, _ := st.Outbox("", 0)
	if len(page.Messages) != 301 || page.Pending != 1 || page.Failed != 1 {
		t.Errorf("%d messages left (pending %d, failed %d), want 301 (1, 1)", len(page.Messages), page.Pending, page.Failed)
	}
	if next, _ := st.NextPending(); next == nil || next.Text != "5" {
		t.Errorf("next pending %+v, want the kept 5", next)
	}
	if n, _ := st.PruneMessages(t0.Add(2200 * time.Second)); n != 0 {
		t.Errorf("pruned %d more", n)
	}
}
