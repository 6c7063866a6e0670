package store

import (
	bolt "go.etcd.io/bbolt"
)

// Sizes says how big the database is against what it holds.
type Sizes struct {
	// File is the file's size; Data the bytes of every key and value it
	// holds (what the file would need without page overhead).
	File int64 `json:"file_bytes"`
	Data int64 `json:"data_bytes"`
	// Free is the file's free pages (reused by later writes).
	Free int64 `json:"free_bytes"`
	// Buckets are the keys and data bytes per bucket under the root
	// (nested buckets counted in their parent).
	Buckets map[string]BucketSize `json:"buckets"`
}

// BucketSize is one bucket's share of Sizes.
type BucketSize struct {
	Keys int   `json:"keys"`
	Data int64 `json:"data_bytes"`
}

// Sizes walks the whole database (a size check for benchmarks and tools).
func (s *Store) Sizes() (Sizes, error) {
	out := Sizes{Buckets: map[string]BucketSize{}}
	st := s.db.Stats()
	out.Free = int64(st.FreePageN+st.PendingPageN) * int64(s.db.Info().PageSize)
	err := s.view(func(tx *bolt.Tx) error {
		out.File = tx.Size()
		var walk func(b *bolt.Bucket, bs *BucketSize) error
		walk = func(b *bolt.Bucket, bs *BucketSize) error {
			return b.ForEach(func(k, v []byte) error {
				bs.Keys++
				bs.Data += int64(len(k) + len(v))
				if v == nil {
					if nb := b.Bucket(k); nb != nil {
						return walk(nb, bs)
					}
				}
				return nil
			})
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) != string(bRoot) {
				var bs BucketSize
				if err := walk(b, &bs); err != nil {
					return err
				}
				out.Buckets[string(name)] = bs
				out.Data += bs.Data
				return nil
			}
			return b.ForEach(func(k, v []byte) error {
				var bs BucketSize
				if v == nil {
					if nb := b.Bucket(k); nb != nil {
						if err := walk(nb, &bs); err != nil {
							return err
						}
					}
				} else {
					bs.Keys, bs.Data = 1, int64(len(k)+len(v))
				}
				out.Buckets[string(k)] = bs
				out.Data += bs.Data
				return nil
			})
		})
	})
	return out, err
}
