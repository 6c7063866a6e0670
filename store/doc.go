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
//	  outbox/   <8-byte sequence>                     → Message (Slack messages, delivered in order)
//	  silences/ <8-byte sequence>                     → Silence
//	  notify/   <watch or "source:<name>" or "degraded"> → notification state (owned by package alerts)
//
// Invariants: a history row is written only when an offer appears, changes
// its priced terms (pricewatch.Offer.SamePrice) or vanishes from a
// successful run, so an unchanged re-scrape adds nothing but its run record.
// A failed run writes its run record and health and touches no offer. Every
// run commits in one transaction. One process holds the file at a time:
// Open waits at most Options.Timeout and then returns ErrLocked.
package store
