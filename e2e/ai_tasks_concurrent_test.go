package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
)

// opMovements checks that operation id moved credits once, through its
// reservation, its settlement and at most one release of what it did not
// use, and returns how many movements name it.
func opMovements(t *testing.T, s *platformtest.System, id string) int {
	t.Helper()
	total := 0
	for typ, most := range map[string]int{"reserve": 1, "settle": 1, "release": 1} {
		c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, typ+":"+id)
		if c > most || (typ != "release" && c != 1) {
			t.Fatalf("%s: %d %s movements", id, c, typ)
		}
		total += c
	}
	return total
}

// TestAITaskConcurrentDuplicates: on every task route, twenty callers
// with one Idempotency-Key make one operation, one provider call, one
// reservation and one settlement: one caller is answered the result, the
// others 409 IDEMPOTENCY_IN_PROGRESS or that same answer replayed, and
// the balance falls by exactly what the one operation settled. Twenty
// callers with twenty keys make twenty operations, each reserved and
// settled once, and the balance falls by exactly their sum, nothing left
// reserved.
func TestAITaskConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	opts, sims := aiTaskOptions(t, false)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		raiseKeyLimits(t, s)
		settle(t, s, "plan.monthly_grant")
		project := createTestProject(t, s, s.Boot.TestKey, "Night Drive")
		const n = 20
		for _, tc := range aiTaskCases() {
			path := tc.path(project)

			// One key, twenty callers; the first provider answer is slow so
			// that the duplicates meet the running request.
			sims.openai.Reset()
			sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultSlow, Delay: 300 * time.Millisecond}, 1)
			sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: tc.valid}, n)
			before := creditInt(t, s, ledger.AccountWorkspaceCredits)
			ops, movements := count(t, s, `SELECT COUNT(*) FROM ai_operations`), count(t, s, `SELECT COUNT(*) FROM ledger_movements`)
			type answer struct {
				status   int
				code     string
				replayed bool
				ids      []string
			}
			answers := make(chan answer, n)
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					r := aiPost(s, s.Boot.TestKey, path, "dup-"+tc.name, tc.body)
					a := answer{status: r.Status, code: r.Code(), replayed: r.Header.Get("Idempotent-Replayed") == "true"}
					if r.Status == http.StatusOK {
						var ta taskAnswer
						r.Data(t, &ta)
						a.ids = ta.Run.OperationIDs
					}
					answers <- a
				})
			}
			wg.Wait()
			close(answers)
			first, replays, inProgress := 0, 0, 0
			var id string
			for a := range answers {
				switch {
				case a.status == http.StatusOK && len(a.ids) == 1 && (id == "" || a.ids[0] == id):
					id = a.ids[0]
					if a.replayed {
						replays++
					} else {
						first++
					}
				case a.status == http.StatusConflict && a.code == "IDEMPOTENCY_IN_PROGRESS":
					inProgress++
				default:
					t.Fatalf("%s: a duplicate answered %d %s %v (the operation %s)", tc.name, a.status, a.code, a.ids, id)
				}
			}
			if first != 1 || first+replays+inProgress != n {
				t.Fatalf("%s: %d answered first, %d replayed, %d in progress", tc.name, first, replays, inProgress)
			}
			if c := count(t, s, `SELECT COUNT(*) FROM ai_operations`); c != ops+1 {
				t.Fatalf("%s: %d operations made, want 1", tc.name, c-ops)
			}
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements`); c != movements+opMovements(t, s, id) {
				t.Fatalf("%s: %d ledger movements, not all the operation's", tc.name, c-movements)
			}
			if c := len(sent(t, sims)); c != 1 {
				t.Fatalf("%s: %d provider calls, want 1", tc.name, c)
			}
			checkTaskLedger(t, s, before, []string{id})
			// Once it ended, the key replays it.
			r := aiPost(s, s.Boot.TestKey, path, "dup-"+tc.name, tc.body)
			var again taskAnswer
			aiOK(t, tc.name+" replay", r, http.StatusOK, &again)
			if r.Header.Get("Idempotent-Replayed") != "true" || !slices.Equal(again.Run.OperationIDs, []string{id}) {
				t.Fatalf("%s: the replay after the burst: %s", tc.name, r.Body)
			}

			// Twenty keys, twenty callers.
			sims.openai.Reset()
			sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: tc.valid}, n)
			before = creditInt(t, s, ledger.AccountWorkspaceCredits)
			ops, movements = count(t, s, `SELECT COUNT(*) FROM ai_operations`), count(t, s, `SELECT COUNT(*) FROM ledger_movements`)
			got := make(chan []string, n)
			for i := range n {
				wg.Go(func() {
					r := aiPost(s, s.Boot.TestKey, path, fmt.Sprintf("%s-%d", tc.name, i), tc.body)
					var ta taskAnswer
					if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" {
						t.Errorf("%s key %d: %d %v %s", tc.name, i, r.Status, r.Header, r.Body)
						got <- nil
						return
					}
					r.Data(t, &ta)
					got <- ta.Run.OperationIDs
				})
			}
			wg.Wait()
			close(got)
			var ids []string
			for g := range got {
				ids = append(ids, g...)
			}
			slices.Sort(ids)
			if len(ids) != n || len(slices.Compact(slices.Clone(ids))) != n {
				t.Fatalf("%s: operations %v, want %d distinct", tc.name, ids, n)
			}
			if c := count(t, s, `SELECT COUNT(*) FROM ai_operations`); c != ops+n {
				t.Fatalf("%s: %d operations made, want %d", tc.name, c-ops, n)
			}
			moved := 0
			for _, id := range ids {
				moved += opMovements(t, s, id)
			}
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements`); c != movements+moved {
				t.Fatalf("%s: %d ledger movements, %d of them the operations'", tc.name, c-movements, moved)
			}
			if c := len(sent(t, sims)); c != n {
				t.Fatalf("%s: %d provider calls, want %d", tc.name, c, n)
			}
			checkTaskLedger(t, s, before, ids)
		}
	})
}
