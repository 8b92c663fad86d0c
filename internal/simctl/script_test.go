package simctl

import (
	"slices"
	"testing"
)

func TestScriptFailsNTimesThenSucceeds(t *testing.T) {
	var s Script[int]
	if _, ok := s.Next("create"); ok {
		t.Fatal("an empty script applied")
	}
	s.Add("create", 500, 2)
	s.Add("create", 429, 1)
	s.Add("query", 503, 1)
	var got []int
	for i := 0; i < 5; i++ {
		if f, ok := s.Next("create"); ok {
			got = append(got, f)
		} else {
			got = append(got, 200)
		}
	}
	if want := []int{500, 500, 429, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("create answered %v, want %v", got, want)
	}
	if f, ok := s.Next("query"); !ok || f != 503 || s.Len() != 0 {
		t.Fatalf("query: %d %v, %d left", f, ok, s.Len())
	}
}

func TestScriptAnyKeyAndUnlimited(t *testing.T) {
	var s Script[string]
	s.Add(AnyKey, "slow", 0)
	for _, k := range []string{"a", "b", "a"} {
		if f, ok := s.Next(k); !ok || f != "slow" {
			t.Fatalf("%s: %q %v", k, f, ok)
		}
	}
	s.Drop("a") // drops only steps added for "a"
	if s.Len() != 1 {
		t.Fatal("Drop of another key removed an AnyKey step")
	}
	s.Drop(AnyKey)
	if _, ok := s.Next("a"); ok {
		t.Fatal("a dropped step applied")
	}
}

func TestScriptTakeVisitsInOrderUntilStopped(t *testing.T) {
	type fault struct {
		delay    int
		terminal bool
	}
	var s Script[fault]
	s.Add(AnyKey, fault{delay: 1}, 1)
	s.Add("get", fault{delay: 2}, 1)
	s.Add("get", fault{terminal: true}, 1)
	s.Add("get", fault{delay: 4}, 1)
	delay, terminal := 0, false
	s.Take("get", func(f fault) bool {
		delay += f.delay
		terminal = f.terminal
		return !f.terminal
	})
	if delay != 3 || !terminal || s.Len() != 1 {
		t.Fatalf("delay %d, terminal %v, %d left", delay, terminal, s.Len())
	}
	if f, ok := s.Next("get"); !ok || f.delay != 4 {
		t.Fatalf("the step after the terminal one: %+v %v", f, ok)
	}
}

func TestScriptSetReplacesAKeysSteps(t *testing.T) {
	var s Script[int]
	s.Add("task", 500, 3)
	s.Add("credits", 502, 1)
	s.Set("task", 503, 1)
	if f, _ := s.Next("task"); f != 503 {
		t.Fatalf("task answered %d after Set", f)
	}
	if _, ok := s.Next("task"); ok {
		t.Fatal("the replaced steps still apply")
	}
	s.Clear()
	if _, ok := s.Next("credits"); ok || s.Len() != 0 {
		t.Fatal("Clear left a step")
	}
}
