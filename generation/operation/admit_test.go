package operation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
)

var (
	scopeA = access.Scope{TenantID: "ten_1", WorkspaceID: "ws_a", Environment: access.Test}
	scopeB = access.Scope{TenantID: "ten_1", WorkspaceID: "ws_b", Environment: access.Test}
)

// waiting reports how many accepts hold or wait for scope's slots.
func (a *admission) waiting(scope access.Scope) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g := a.scopes[scope]; g != nil {
		return g.refs
	}
	return 0
}

// waitRefs waits until scope has n accepts holding or waiting.
func waitRefs(t *testing.T, a *admission, scope access.Scope, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); a.waiting(scope) != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d accepts at the gate, want %d", a.waiting(scope), n)
		}
	}
}

func enterNow(t *testing.T, a *admission, scope access.Scope) func() {
	t.Helper()
	leave, err := a.enter(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	return leave
}

// TestAdmissionOrder fills a scope's two slots, queues three more accepts
// one after another, and frees slots one at a time: the waiting accepts
// enter in the order they came, never more than two at once, while
// another scope admits at once.
func TestAdmissionOrder(t *testing.T) {
	a := newAdmission(2)
	first, second := enterNow(t, a, scopeA), enterNow(t, a, scopeA)
	entered := make(chan int, 3)
	leaves := make([]chan func(), 3)
	for i := range 3 {
		leaves[i] = make(chan func(), 1)
		go func() {
			leave, err := a.enter(context.Background(), scopeA)
			if err != nil {
				t.Error(err)
				return
			}
			entered <- i
			leaves[i] <- leave
		}()
		waitRefs(t, a, scopeA, 3+i) // queued behind the ones before it
	}
	enterNow(t, a, scopeB)() // another workspace does not wait
	select {
	case i := <-entered:
		t.Fatalf("accept %d entered while both slots were held", i)
	case <-time.After(20 * time.Millisecond):
	}
	first()
	first() // a second call frees nothing more
	for want, leave := range []func(){second, nil, nil} {
		got := <-entered
		if got != want {
			t.Fatalf("accept %d entered, want %d (arrival order)", got, want)
		}
		select {
		case i := <-entered:
			t.Fatalf("accept %d entered with no slot free", i)
		case <-time.After(20 * time.Millisecond):
		}
		if leave == nil {
			leave = <-leaves[want-1]
		}
		leave()
	}
	(<-leaves[2])()
	if n := len(a.scopes); n != 0 {
		t.Errorf("%d scopes kept after every accept left, want 0", n)
	}
}

// TestAdmissionCancel ends the context of a waiting accept: it leaves the
// queue with the context's error, takes no slot, and nothing of it stays.
func TestAdmissionCancel(t *testing.T) {
	a := newAdmission(1)
	leave := enterNow(t, a, scopeA)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := a.enter(ctx, scopeA)
		errc <- err
	}()
	waitRefs(t, a, scopeA, 2)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}
	if n := a.waiting(scopeA); n != 1 {
		t.Errorf("%d accepts at the gate after the cancel, want the holder alone", n)
	}
	leave()
	enterNow(t, a, scopeA)() // the slot the cancelled one never took is free
	if n := len(a.scopes); n != 0 {
		t.Errorf("%d scopes kept, want 0", n)
	}
}

// TestAdmitWithoutReservation admits a plan that reserves nothing at once,
// even when its scope is full, and a Service with the gate off admits
// every plan at once.
func TestAdmitWithoutReservation(t *testing.T) {
	p := &access.Principal{TenantID: scopeA.TenantID, WorkspaceID: scopeA.WorkspaceID, Environment: scopeA.Environment}
	s := &Service{admission: newAdmission(1)}
	leave, err := s.Admit(context.Background(), p, Plan{reserve: 15})
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Admit(ctx, p, Plan{reserve: 15}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second reserving plan with the slot held: %v, want to wait until its context ends", err)
	}
	done, err := s.Admit(context.Background(), p, Plan{reserve: 0})
	if err != nil {
		t.Fatalf("a plan that reserves nothing: %v", err)
	}
	done()
	off := &Service{admission: newAdmission(-1)}
	for range 3 {
		if _, err := off.Admit(context.Background(), p, Plan{reserve: 15}); err != nil {
			t.Fatalf("gate off: %v", err)
		}
	}
}
