package simctl

import (
	"regexp"
	"sync"
	"testing"
)

func TestIdentifiers(t *testing.T) {
	for _, c := range []struct {
		got string
		re  string
	}{
		{RandomHex(16), `^[0-9a-f]{32}$`},
		{RandomAlnum(24), `^[0-9A-Za-z]{24}$`},
		{RandomUUID(), `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
	} {
		if !regexp.MustCompile(c.re).MatchString(c.got) {
			t.Errorf("%q does not match %s", c.got, c.re)
		}
	}
	if RandomHex(16) == RandomHex(16) {
		t.Error("two random ids are equal")
	}
}

func TestCounterIsDeterministic(t *testing.T) {
	var c Counter
	if a, b := c.Next("chatcmpl-"), c.Next("msg_"); a != "chatcmpl-000001" || b != "msg_000002" {
		t.Fatalf("ids %s %s", a, b)
	}
	var wg sync.WaitGroup
	seen := sync.Map{}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, dup := seen.LoadOrStore(c.Next("id"), true); dup {
					t.Error("a counter id repeated")
				}
			}
		}()
	}
	wg.Wait()
}
