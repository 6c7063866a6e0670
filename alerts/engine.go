package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/rank"
)

// Watch is a ranking whose best offer is watched.
type Watch struct {
	Name     string
	Workload string
	Card     string
	Modes    []pricewatch.Mode
	Currency string
}

// StateStore persists each watch's State (the store implements it).
type StateStore interface {
	GetAlertState(watch string, v any) (bool, error)
	PutAlertState(watch string, v any) error
}

// Engine evaluates watches against a ranking snapshot.
type Engine struct {
	Store        StateStore
	Notifier     Notifier // nil: decisions are logged, not posted
	Watches      []Watch
	MinChangePct float64
	Log          *slog.Logger
	Now          func() time.Time
	// Result, if set, counts outcomes: baseline, posted, failed, logged.
	Result func(result string)
}

// Evaluate decides, posts and records for every watch. A failed post
// leaves that watch's state as it was, so the next evaluation retries.
func (e *Engine) Evaluate(ctx context.Context, snap *rank.Snapshot) error {
	var errs []error
	for _, w := range e.Watches {
		if err := e.evaluate(ctx, snap, w); err != nil {
			errs = append(errs, fmt.Errorf("watch %s: %w", w.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) count(r string) {
	if e.Result != nil {
		e.Result(r)
	}
}

func (e *Engine) evaluate(ctx context.Context, snap *rank.Snapshot, w Watch) error {
	var st State
	if _, err := e.Store.GetAlertState(w.Name, &st); err != nil {
		return fmt.Errorf("load state: %w", err)
	}
	cur, err := e.current(snap, w)
	if err != nil {
		return err
	}
	// Both sides are in the watch's currency: the stored cost is the one
	// announced, the current one is converted at today's rates.
	present := func(key string) bool {
		for _, en := range snap.Entries(w.Workload) {
			if en.Key == key && slices.Contains(w.Modes, en.Mode) && (w.Card == "" || en.Card == w.Card) {
				return true
			}
		}
		return false
	}
	d := Decide(st.Last, cur, present, e.MinChangePct)
	switch {
	case d.Kind == Baseline:
		st.Version, st.Last = 1, cur
		if err := e.Store.PutAlertState(w.Name, st); err != nil {
			return fmt.Errorf("record baseline: %w", err)
		}
		e.count("baseline")
		e.Log.Info("baseline recorded", "watch", w.Name, "best", cur.Label(), "cost_per_mtok", cur.CostPerMillionTokens, "currency", cur.Currency)
		return nil
	case !d.Post():
		return nil
	}
	msg := ChangeMessage(w.Name, d)
	if e.Notifier == nil {
		e.count("logged")
		e.Log.Info("alert (no Slack configured)", "watch", w.Name, "text", msg.Text)
	} else if err := e.Notifier.Notify(ctx, msg); err != nil {
		e.count("failed")
		e.Log.Warn("alert post failed; will retry on the next run", "watch", w.Name, "err", err)
		return nil
	} else {
		e.count("posted")
		e.Log.Info("alert posted", "watch", w.Name, "kind", d.Kind, "text", msg.Text)
	}
	st.Version, st.Last, st.LastPosted = 1, cur, e.Now()
	if err := e.Store.PutAlertState(w.Name, st); err != nil {
		// The post went out but is not recorded: the next run may repeat it.
		return fmt.Errorf("record posted alert: %w", err)
	}
	return nil
}

// current is the watch's best choice in its currency, nil if none.
func (e *Engine) current(snap *rank.Snapshot, w Watch) (*Choice, error) {
	best := snap.Best(w.Workload, w.Modes, w.Card)
	if len(best) == 0 {
		return nil, nil
	}
	b := best[0]
	price, err := snap.Rates.Convert(b.PricePerGPUHour, snap.Base, w.Currency)
	if err != nil {
		return nil, fmt.Errorf("convert to %s: %w", w.Currency, err)
	}
	return &Choice{
		Key: b.Key, Card: b.Card, Source: b.Source, OfferID: b.OfferID, Region: b.Region, Mode: b.Mode,
		PricePerGPUHour:      price,
		CostPerMillionTokens: rank.CostPerMillionTokens(price, b.TokensPerSecond),
		Currency:             w.Currency, At: e.Now(),
	}, nil
}
