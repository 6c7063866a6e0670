package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The slack bucket remembers verified Slack requests across restarts: the
// signatures seen (so a captured request cannot be played again while its
// timestamp is still accepted) and what each writing command did (so one
// Slack request never writes twice). It is created on first use: a
// version 1 file without it is still version 1.
var (
	bSlack         = []byte("slack")
	bSlackSeen     = []byte("seen")
	bSlackRequests = []byte("requests")
)

// slackPruneBatch bounds the expired records one call deletes.
const slackPruneBatch = 1000

// SlackRequest is what a writing Slack command did, kept under the
// request's identity until Expires.
type SlackRequest struct {
	Expires time.Time `json:"expires"`
	Silence *Silence  `json:"silence,omitempty"`
}

func slackBuckets(tx *bolt.Tx) (seen, reqs *bolt.Bucket, err error) {
	root, err := tx.Bucket(bRoot).CreateBucketIfNotExists(bSlack)
	if err != nil {
		return nil, nil, err
	}
	if seen, err = root.CreateBucketIfNotExists(bSlackSeen); err != nil {
		return nil, nil, err
	}
	if reqs, err = root.CreateBucketIfNotExists(bSlackRequests); err != nil {
		return nil, nil, err
	}
	return seen, reqs, nil
}

// pruneExpired deletes up to slackPruneBatch records of b whose expiry
// (read by expiry) is not after now.
func pruneExpired(b *bolt.Bucket, now time.Time, expiry func(v []byte) (time.Time, bool)) error {
	var old [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(old) < slackPruneBatch; k, v = c.Next() {
		if exp, ok := expiry(v); !ok || !exp.After(now) {
			old = append(old, append([]byte{}, k...))
		}
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func seenExpiry(v []byte) (time.Time, bool) {
	if len(v) != 8 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v))), true
}

func requestExpiry(v []byte) (time.Time, bool) {
	var r SlackRequest
	if json.Unmarshal(v, &r) != nil {
		return time.Time{}, false
	}
	return r.Expires, true
}

// FirstSlackSignature records a verified Slack request signature (the
// decoded HMAC bytes, not their hex spelling) until expires and reports
// whether it is new; false means the same signed request came before: a
// replay. Records expired at now are dropped in the same transaction.
func (s *Store) FirstSlackSignature(sig []byte, expires, now time.Time) (first bool, err error) {
	if len(sig) == 0 {
		return false, fmt.Errorf("slack signature: empty")
	}
	err = s.update(func(tx *bolt.Tx) error {
		seen, _, err := slackBuckets(tx)
		if err != nil {
			return err
		}
		if err := pruneExpired(seen, now, seenExpiry); err != nil {
			return err
		}
		if v := seen.Get(sig); v != nil {
			if exp, ok := seenExpiry(v); ok && exp.After(now) {
				return nil
			}
		}
		first = true
		return seen.Put(sig, timeKey(expires))
	})
	return first, err
}

// AddSilenceOnce stores sl for the Slack request id (its identity, such as
// team and trigger id) unless that request already stored one: it returns
// the silence the request created and whether this call created it. The
// silence and the record of the request commit together; the record is
// kept until expires.
func (s *Store) AddSilenceOnce(requestID string, sl Silence, expires, now time.Time) (Silence, bool, error) {
	if requestID == "" {
		return Silence{}, false, fmt.Errorf("slack request: empty id")
	}
	created := false
	err := s.update(func(tx *bolt.Tx) error {
		_, reqs, err := slackBuckets(tx)
		if err != nil {
			return err
		}
		if err := pruneExpired(reqs, now, requestExpiry); err != nil {
			return err
		}
		if v := reqs.Get([]byte(requestID)); v != nil {
			var r SlackRequest
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode slack request %q: %w", requestID, err)
			}
			if r.Silence != nil && r.Expires.After(now) {
				sl = *r.Silence
				return nil
			}
		}
		b := bucket(tx, bSilences)
		id, err := b.NextSequence()
		if err != nil {
			return err
		}
		sl.ID, created = id, true
		if err := putJSON(b, idKey(id), sl); err != nil {
			return err
		}
		return putJSON(reqs, []byte(requestID), SlackRequest{Expires: expires, Silence: &sl})
	})
	if err != nil {
		return Silence{}, false, err
	}
	return sl, created, nil
}
