package simctl

import "time"

// Clock tells a simulator's time. It is the shape of every simulator's
// Config.Clock.
type Clock interface {
	Now() time.Time
}

// WallClock is the real time, the default clock of every simulator. A
// Runner on the wall clock waits with real timers; on any other clock it
// re-reads the clock while it waits.
type WallClock struct{}

// Now returns the current time.
func (WallClock) Now() time.Time { return time.Now() }

// isWall reports whether c is the wall clock.
func isWall(c Clock) bool {
	switch c.(type) {
	case nil, WallClock, *WallClock:
		return true
	}
	return false
}
