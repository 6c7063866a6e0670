package rank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/pricewatch/pricewatch"
)

// MaxDeadlineHours bounds a deadline given in hours (ten years).
const MaxDeadlineHours = 87600

// Deadline is when a job must be done: wall-clock hours from now (a JSON
// number, 48) or a date (a JSON string, "2027-03-01" or RFC 3339).
type Deadline struct {
	Hours float64
	At    time.Time
}

// UnmarshalJSON reads a number of hours or a date.
func (d *Deadline) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				d.At = t.UTC()
				return nil
			}
		}
		return fmt.Errorf("deadline %q: want hours (a number) or a date (2027-03-01 or RFC 3339)", s)
	}
	return json.Unmarshal(b, &d.Hours)
}

// MarshalJSON writes the deadline as it was given.
func (d Deadline) MarshalJSON() ([]byte, error) {
	if !d.At.IsZero() {
		return json.Marshal(d.At.Format(time.RFC3339))
	}
	return json.Marshal(d.Hours)
}

// hoursFrom is the deadline in wall-clock hours after now (the snapshot's
// time: rank reads no clock).
func (d Deadline) hoursFrom(now time.Time) (float64, error) {
	if !d.At.IsZero() {
		h := d.At.Sub(now).Hours()
		if h <= 0 {
			return 0, invalid("deadline", "%s is not after the prices' time %s", d.At.Format(time.RFC3339), now.Format(time.RFC3339))
		}
		return h, nil
	}
	if !within(d.Hours, 1.0/60, MaxDeadlineHours) {
		return 0, invalid("deadline", "hours must be within 1/60..%d", MaxDeadlineHours)
	}
	return d.Hours, nil
}

// wallClock is how long an option takes from rental to done: the
// billed start-up, the work, and for spot the checkpoint writes and the
// work lost to reclaims (the expected figures).
func (o Option) wallClock(job Job) float64 {
	h := o.Hours + job.Hidden.StartupMinutes/60
	if o.Source == ownedSource {
		h = o.Hours
	}
	if o.Spot != nil {
		h += o.Spot.CheckpointHours + o.Spot.ExpectedLostHours
	}
	return h
}

// ownedSource is the source of owned hardware's options.
const ownedSource = "owned"

// deadlineCount is the GPUs a per-GPU training rental takes to finish by
// the deadline: the fewest allowed counts from need whose hours (tokens at
// n × tokens/s × the link model's scaling, plus start-up) are within
// deadline hours even at PessimisticThroughput, else the fewest that make
// it at the expected speed (the option then says it may miss), else the
// count that finishes soonest. ok is false when no count is allowed.
func deadlineCount(job Job, c pricewatch.Card, o pricewatch.Offer, need int, perGPU float64) (int, bool) {
	best, bestH, expected := 0, math.Inf(1), 0
	startup := job.Hidden.StartupMinutes / 60
	for _, n := range o.GPUCounts {
		if n < need || n > job.MaxGPUs {
			continue
		}
		work := job.Tokens / (float64(n) * perGPU * TrainingScaling(job.Workload, c, n) * 3600)
		if work/PessimisticThroughput+startup <= job.DeadlineHours {
			return n, true
		}
		h := work + startup
		if h <= job.DeadlineHours && expected == 0 {
			expected = n
		}
		if h < bestH {
			best, bestH = n, h
		}
	}
	if expected > 0 {
		return expected, true
	}
	return best, best > 0
}

// deadlineRisk says when an option that finishes by the deadline at the
// expected speed would not at PessimisticThroughput ("" when it would).
func deadlineRisk(o Option, job Job) string {
	if job.DeadlineHours <= 0 || !o.Fits {
		return ""
	}
	worst := o.WallClockHours + o.Hours*(1/PessimisticThroughput-1)
	if worst <= job.DeadlineHours {
		return ""
	}
	return fmt.Sprintf("may miss the deadline (%.4g h): it takes %.4g h at the expected speed, %.4g h at 30%% lower throughput",
		job.DeadlineHours, o.WallClockHours, worst)
}
