package pipeline

import "github.com/pricewatch/pricewatch/store"

// Outbox lists up to limit outbox messages of a status ("": any), newest
// first, with the counts of pending and failed ones; its cost does not grow
// with the outbox (GET /v1/alerts).
func (p *Pipeline) Outbox(status string, limit int) (store.OutboxPage, error) {
	return p.store.Outbox(status, limit)
}
