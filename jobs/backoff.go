package jobs

import "time"

// MaxBackoff caps the delay between attempts.
const MaxBackoff = time.Hour

// Backoff returns the delay before retrying a job whose attempt number
// attempt (1 for the first run) failed. The ceiling is min(2^attempt s,
// MaxBackoff); the delay is half the ceiling plus jitter times the other
// half ("equal jitter"), so it always lies in [ceiling/2, ceiling] and
// retries of many jobs that failed together spread out. jitter is clamped to
// [0, 1]; callers pass a random number, tests a fixed one.
func Backoff(attempt int, jitter float64) time.Duration {
	ceiling := backoffCeiling(attempt)
	switch {
	case jitter < 0 || jitter != jitter: // negative or NaN
		jitter = 0
	case jitter > 1:
		jitter = 1
	}
	half := ceiling / 2
	return half + time.Duration(jitter*float64(ceiling-half))
}

// backoffCeiling is min(2^attempt seconds, MaxBackoff), with attempt < 1
// treated as 1.
func backoffCeiling(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	// 2^12 s already exceeds an hour; stop shifting before it can overflow.
	if attempt >= 12 {
		return MaxBackoff
	}
	return min(time.Duration(1<<attempt)*time.Second, MaxBackoff)
}
