// Package store keeps pricewatch's state in one bbolt file.
//
// Schema (version 2; the root bucket keeps its name v1). Keys are ordered
// so range scans are cheap; times in keys are 8-byte big-endian Unix
// nanoseconds (UTC). Offers and history are binary (codec.go: varint
// strings and numbers, 8-byte floats); the rest is JSON.
//
//	meta/
//	  schema_version          → "2"
//	v1/
//	  offers/   <source> 0x00 <offer key>            → offer (binary: first seen, a pinned observed-at or 0,
//	                                                     then the priced terms); rewritten only when they change
//	  seen/     <source>                              → time the source's last applied run confirmed its offers:
//	                                                     every offer's observed-at, unless its record pins one
//	                                                     (an outlier held back keeps the time it was last confirmed)
//	  offer_ids/  <offer key>                         → 4-byte offer id (interned on first change)
//	  offer_keys/ <4-byte id>                         → <source> 0x00 <offer key>
//	  terms/    <uvarint id>                          → card, GPUs, currency, stock (a history row's slow-moving part)
//	  term_ids/ <encoded terms>                       → uvarint id
//	  hist/     <4-byte id> <time>                    → raw row: flags (event, availability), price, terms id;
//	                                                     or, at a month's first instant, that month's compacted
//	                                                     days (day, flags, terms id, open, min, max, close)
//	  change_index/ <time> <4-byte id>                → "" (the changes in time order; ChangeRetention)
//	  card_ids/ <card> 0x00 <first 4-byte id>         → sorted 4-byte ids, at most 1,024 (every offer any of whose rows
//	                                                     named the card: one card's history reads its own offers;
//	                                                     built once at Open for a file written before it, then
//	                                                     meta/card_index is set)
//	  runs/     <source> 0x00 <started>               → pricewatch.Run (pruned after RunRetention)
//	  health/   <source>                              → Health (last run, last success, failures)
//	  profiles/ <card> 0x00 <workload>                → rank.Profile (measured, published, estimated)
//	  fx/       "latest" | <YYYY-MM-DD>               → pricewatch.Rates (last good rates kept)
//	  tokens/   <source> 0x00 <token key>             → pricewatch.TokenPrice (an API's per-token price, JSON)
//	  tokenhist/ <token key> 0x00 <time>              → TokenChange (new, changed, vanished; JSON)
//	  alerts/   <watch>                               → alert state (owned by package alerts)
//	  series/   <watch>/ <time>                       → Sample (a watch's best cost over time; 30 days)
//	  outbox/   <8-byte sequence>                     → Message (Slack messages, delivered in order;
//	                                                     sent and failed ones pruned after the retention;
//	                                                     a pending one may carry the Attempt committed
//	                                                     before its last post, a sent one Slack's ts)
//	  outbox_pending/ <8-byte sequence>               → "" (ids of pending messages; bucket sequence = count)
//	  outbox_failed/  <8-byte sequence>               → "" (ids of failed messages; bucket sequence = count)
//	  silences/ <8-byte sequence>                     → Silence
//	  notify/   <watch or "source:<name>" or "degraded"> → notification state (owned by package alerts)
//	            "names:<source>"                      → the source's seen unknown GPU names: baseline time; per name first
//	                                                    and last seen, offers, baseline flag (alerts/newnames.go)
//	  slack/    (created on first use)
//	    seen/     <decoded request signature, 32 bytes>   → 8-byte expiry (a replay is refused until then; pruned after)
//	    requests/ <team id> 0x00 <trigger id>             → SlackRequest (what a writing command did; kept 24 h)
//
// Schema 1 (JSON offers rewritten on every run, history/ keyed by the
// offer key, changelog/ with JSON changes) is migrated in the transaction
// that first opens the file for writing (migrate.go); a read-only open of
// it asks for that. History retention: Compact rolls raw rows older than
// the raw window (default 90 days) into one row per offer and month with
// a daily open/min/max/close; Rewrite copies the file compactly.
//
// Invariants: a history row is written only when an offer appears, changes
// its priced terms (pricewatch.Offer.SamePrice) or vanishes from a
// successful run, and an offer's record only when something in it changes,
// so an unchanged re-scrape adds nothing but its run record, its health
// and its source's seen time.
// A failed run writes its run record and health and touches no offer. The
// outbox index buckets hold exactly the ids of the outbox's pending and
// failed messages and change in the same transaction as the message (a
// file written before them gets them on its first outbox write). Every
// run commits in one transaction. One process holds the file at a time:
// Open waits at most Options.Timeout and then returns ErrLocked.
package store
