package rewards

import (
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fsm"
)

// TestTablesAreEnforced: each table is a function of (from, event), and
// the transition functions the domain moves records with answer exactly
// what the tables say.
func TestTablesAreEnforced(t *testing.T) {
	ch := fsm.New("rewards.Transition", "A challenge", Moves())
	fu := fsm.New("rewards.FundingTransition", "A reward pool", FundingMoves())
	rw := fsm.New("rewards.RewardTransition", "A reward", RewardMoves())
	for name, err := range map[string]error{"challenge": ch.Check(), "funding": fu.Check(), "reward": rw.Check(),
		"challenge enforced": ch.Enforced(Transition), "funding enforced": fu.Enforced(FundingTransition),
		"reward enforced": rw.Enforced(RewardTransition)} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := len(Moves()); got != len(Statuses())-1 {
		t.Fatalf("%d challenge moves", got)
	}
}

// TestMovePermissions: announcing and opening publish, the rounds update
// the project, and deciding who is paid needs reward.allocate.
func TestMovePermissions(t *testing.T) {
	want := map[Status]access.Permission{StatusScheduled: access.ProjectPublish, StatusOpen: access.ProjectPublish,
		StatusSubmissionsClosed: access.ProjectUpdate, StatusReview: access.ProjectUpdate, StatusVoting: access.ProjectUpdate,
		StatusWinnersSelected: access.RewardAllocate, StatusRewardsAllocated: access.RewardAllocate, StatusCompleted: access.RewardAllocate}
	for _, m := range Moves() {
		if got := MovePermission(m.To); got != want[m.To] {
			t.Errorf("%s -> %s needs %s, want %s", m.From, m.To, got, want[m.To])
		}
	}
}

// TestCreatorStates: every reward state shows as a creator state, and no
// record shows ESTIMATED or ELIGIBLE.
func TestCreatorStates(t *testing.T) {
	want := map[State]CreatorState{StateAllocated: CreatorAllocated, StateClaimable: CreatorClaimable, StateSubmitted: CreatorSubmitted,
		StateConfirmed: CreatorConfirmed, StateDistributed: CreatorSettled, StateReconciled: CreatorReconciled,
		StateRequiresReview: CreatorSubmitted}
	for _, s := range States() {
		if got := s.Creator(); got != want[s] {
			t.Errorf("%s shows %s, want %s", s, got, want[s])
		}
	}
}

// TestOwedGrossesUp: a pool owes each unpaid reward and its unallocated
// rest, each grossed up for the transfer fee; paid rewards owe nothing.
func TestOwedGrossesUp(t *testing.T) {
	fee := token2022.TransferFee{BasisPoints: 200, MaximumFee: 1 << 40}
	c := Challenge{Pool: Pool{AmountAtomic: 1000}}
	rs := []Reward{{AmountAtomic: 300, State: StateClaimable}, {AmountAtomic: 200, State: StateDistributed}}
	got, err := owed(c, rs, fee)
	if err != nil {
		t.Fatal(err)
	}
	// 300 -> 307 (fee 7: ceil(307*0.02)=7), rest 500 -> 511 (fee 11).
	if got != 307+511 {
		t.Fatalf("owed %d, want %d", got, 307+511)
	}
	if got, _ := owed(c, nil, token2022.TransferFee{}); got != 1000 {
		t.Fatalf("owed without a fee %d", got)
	}
}

// TestLocalSignerHidesItsKey: the signer opens the sealed key, signs, and
// prints its address alone.
func TestLocalSignerHidesItsKey(t *testing.T) {
	sealer := xorSealer{}
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i + 1)
	}
	priv := ed25519Key(key)
	s, err := NewLocalSigner(sealer, SealKey(sealer, priv))
	if err != nil {
		t.Fatal(err)
	}
	if s.Address().String() != token2022.EncodeBase58(priv[32:]) {
		t.Fatal("the signer's address is not the key's")
	}
	for _, out := range []string{s.String(), s.GoString()} {
		if out != "rewards.LocalSigner("+s.Address().String()+")" {
			t.Fatalf("the signer prints %q", out)
		}
	}
	if _, err := NewLocalSigner(sealer, []byte("short")); err == nil {
		t.Fatal("a malformed sealed key opened")
	}
}
