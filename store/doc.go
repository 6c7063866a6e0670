// Package store keeps pricewatch's state in one bbolt file.
//
// Schema (version 1). Keys are ordered so range scans are cheap; times in
// keys are 8-byte big-endian Unix nanoseconds (UTC); values are JSON.
//
//	meta/
//	  schema_version          → "1"
//	v1/
//	  offers/   <source> 0x00 <offer key>            → pricewatch.Offer (current offers)
//	  history/  <offer key> 0x00 <time>               → HistoryRow (appeared | changed | vanished)
//	  runs/     <source> 0x00 <started>               → pricewatch.Run (pruned after RunRetention)
//	  health/   <source>                              → Health (last run, last success, failures)
//	  profiles/ <card> 0x00 <workload>                → rank.Profile (measured, published, estimated)
//	  fx/       "latest" | <YYYY-MM-DD>               → pricewatch.Rates (last good rates kept)
//	  alerts/   <watch>                               → alert state (owned by package alerts)
//	  changelog/ <time> 0x00 <offer key>              → Change (appeared/changed/vanished with the old price; 30 days)
//	  series/   <watch>/ <time>                       → Sample (a watch's best cost over time; 30 days)
//	  outbox/   <8-byte sequence>                     → Message (Slack messages, delivered in order;
//	                                                     sent and failed ones pruned after the retention)
//	  outbox_pending/ <8-byte sequence>               → "" (ids of pending messages; bucket sequence = count)
//	  outbox_failed/  <8-byte sequence>               → "" (ids of failed messages; bucket sequence = count)
//	  silences/ <8-byte sequence>                     → Silence
//	  notify/   <watch or "source:<name>" or "degraded"> → notification state (owned by package alerts)
//	  slack/    (created on first use; a file without it is still version 1)
//	    seen/     <decoded request signature, 32 bytes>   → 8-byte expiry (a replay is refused until then; pruned after)
//	    requests/ <team id> 0x00 <trigger id>             → SlackRequest (what a writing command did; kept 24 h)
//
// Invariants: a history row is written only when an offer appears, changes
// its priced terms (pricewatch.Offer.SamePrice) or vanishes from a
// successful run, so an unchanged re-scrape adds nothing but its run record.
// A failed run writes its run record and health and touches no offer. The
// outbox index buckets hold exactly the ids of the outbox's pending and
// failed messages and change in the same transaction as the message (a
// file written before them gets them on its first outbox write). Every
// run commits in one transaction. One process holds the file at a time:
// Open waits at most Options.Timeout and then returns ErrLocked.
package store
