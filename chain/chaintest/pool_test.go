package chaintest_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// classicMint creates an SPL Token mint (no extensions).
func (e *env) classicMint(decimals uint8) chain.Address {
	e.t.Helper()
	_, addr := chaintest.NewKeypair()
	e.c.SetAccount(addr, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82), Data: mustMint(e.t, decimals)})
	return addr
}

// plain2022Mint creates a Token-2022 mint without extensions.
func (e *env) plain2022Mint(decimals uint8) chain.Address {
	e.t.Helper()
	_, addr := chaintest.NewKeypair()
	if err := e.c.CreateMint(addr, token2022.Mint{Decimals: decimals, IsInitialized: true}); err != nil {
		e.t.Fatal(err)
	}
	return addr
}

func (e *env) mintTo(wallet, mint chain.Address, amount uint64) chain.Address {
	e.t.Helper()
	ata, err := e.c.MintTo(wallet, mint, amount)
	if err != nil {
		e.t.Fatal(err)
	}
	return ata
}

func (e *env) swapIx(s chaintest.PoolSwap) message.Instruction {
	e.t.Helper()
	ix, err := chaintest.PoolSwapInstruction(s)
	if err != nil {
		e.t.Fatal(err)
	}
	return ix
}

// balances asserts the token balances of accounts.
func (e *env) balances(want map[string]struct {
	addr   chain.Address
	amount uint64
}) {
	e.t.Helper()
	for name, w := range want {
		if got := e.tokenAccount(w.addr).Amount; got != w.amount {
			e.t.Errorf("%s holds %d, want %d", name, got, w.amount)
		}
	}
}

type bal = struct {
	addr   chain.Address
	amount uint64
}

func TestPoolAccounts(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	a := e.classicMint(6)
	b := e.feeMint(e.wallet(0).addr)
	p, err := e.c.CreatePool(chaintest.PoolConfig{MintA: a, MintB: b, ReserveA: 7, ReserveB: 9, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	if chaintest.PoolProgramID() != chain.Address(sha256.Sum256([]byte("chaintest/constant-product-pool/v1"))) {
		t.Error("program id")
	}
	acct, ok := e.c.Account(p.Address)
	if !ok || acct.Owner != chaintest.PoolProgramID() || len(acct.Data) != 202 || acct.Lamports != chaintest.RentExemptMinimum(202) {
		t.Fatalf("pool account %+v", acct)
	}
	d := acct.Data
	if string(d[:8]) != "cppool01" || chain.Address(d[8:40]) != a || chain.Address(d[40:72]) != b ||
		chain.Address(d[72:104]) != p.VaultA || chain.Address(d[104:136]) != p.VaultB || binary.LittleEndian.Uint16(d[136:]) != 30 ||
		chain.Address(d[138:170]) != chain.Address(solana.TokenProgramID) || chain.Address(d[170:202]) != chain.Address(solana.Token2022ProgramID) {
		t.Errorf("pool data % x", d)
	}
	vault := func(mint chain.Address) chain.Address {
		h := sha256.New()
		h.Write([]byte("chaintest/pool-vault"))
		h.Write(p.Address[:])
		h.Write(mint[:])
		return chain.Address(h.Sum(nil))
	}
	if p.VaultA != vault(a) || p.VaultB != vault(b) {
		t.Error("vault addresses")
	}
	va, vb := e.tokenAccount(p.VaultA), e.tokenAccount(p.VaultB)
	if va.Owner != p.Address || va.Mint != a || va.Amount != 7 || vb.Owner != p.Address || vb.Mint != b || vb.Amount != 9 {
		t.Errorf("vaults %+v %+v", va, vb)
	}
	if _, ok := vb.TransferFeeAmount(); !ok {
		t.Error("the fee mint's vault has no TransferFeeAmount")
	}
	if back, err := chaintest.DecodePool(p.Address, d); err != nil || back != p {
		t.Errorf("DecodePool %+v %v", back, err)
	}
	if pools := e.c.Pools(); len(pools) != 1 || pools[0] != p {
		t.Errorf("Pools %+v", pools)
	}
	// A second pool of the pair gets another address.
	p2, err := e.c.CreatePool(chaintest.PoolConfig{MintA: a, MintB: b, ReserveA: 1, ReserveB: 1, FeeBps: 5})
	if err != nil || p2.Address == p.Address || len(e.c.Pools()) != 2 {
		t.Errorf("second pool %+v %v", p2, err)
	}
	if err := e.c.SetPoolReserves(p.Address, 70, 90); err != nil {
		t.Fatal(err)
	}
	if ra, rb, err := e.c.PoolReserves(p.Address); err != nil || ra != 70 || rb != 90 {
		t.Errorf("reserves %d %d %v", ra, rb, err)
	}
	for name, cfg := range map[string]chaintest.PoolConfig{
		"same mints":  {MintA: a, MintB: a},
		"no mint":     {MintA: a, MintB: e.wallet(1).addr},
		"fee 100%":    {MintA: a, MintB: b, FeeBps: 10000},
		"unknown A":   {MintA: chain.Address{9}, MintB: b},
		"missing all": {},
	} {
		if _, err := e.c.CreatePool(cfg); err == nil {
			t.Errorf("%s: created", name)
		}
	}
	if err := e.c.SetPoolReserves(a, 1, 1); err == nil {
		t.Error("SetPoolReserves on a mint")
	}
	if _, err := chaintest.PoolSwapInstruction(chaintest.PoolSwap{Pool: p, InputMint: chain.Address{7}}); err == nil {
		t.Error("an instruction for a mint the pool lacks")
	}
}

func TestPoolSwapBothWays(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	user := e.wallet(1_000_000_000)
	a := e.classicMint(6)
	b := e.plain2022Mint(9)
	p, err := e.c.CreatePool(chaintest.PoolConfig{MintA: a, MintB: b, ReserveA: 1_000_000_000_000, ReserveB: 5_000_000_000_000, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	ua := e.mintTo(user.addr, a, 100_000_000)
	ub := e.mintTo(user.addr, b, 2_000_000_000)

	// A → B: out = 5e12 × 1e7 × 9970 / (1e12 × 10000 + 1e7 × 9970).
	ix := e.swapIx(chaintest.PoolSwap{Pool: p, InputMint: a, Authority: user.addr, Source: ua, Destination: ub,
		InAmount: 10_000_000, QuotedOutAmount: 49_849_503, SlippageBps: 0})
	raw, _ := e.signedV0([]message.Instruction{ix}, nil, user)
	sig := e.mustSendRaw(raw)
	e.balances(map[string]bal{
		"user A": {ua, 90_000_000}, "user B": {ub, 2_049_849_503},
		"vault A": {p.VaultA, 1_000_010_000_000}, "vault B": {p.VaultB, 4_999_950_150_497},
	})
	e.c.AdvanceSlots(1)
	logs := logsOf(t, e, sig)
	id := chaintest.PoolProgramID().String()
	if len(logs) != 5 || logs[0] != "Program "+id+" invoke [1]" || logs[1] != "Program log: Instruction: Route" ||
		logs[2] != "Program log: in_amount=10000000 out_amount=49849503" || logs[4] != "Program "+id+" success" {
		t.Errorf("logs %q", logs)
	}

	// B → A at the moved reserves.
	ix = e.swapIx(chaintest.PoolSwap{Pool: p, InputMint: b, Authority: user.addr, Source: ub, Destination: ua,
		InAmount: 1_000_000_000, QuotedOutAmount: 199_400_000, SlippageBps: 50})
	raw, _ = e.signedV0([]message.Instruction{ix}, nil, user)
	e.mustSendRaw(raw)
	e.balances(map[string]bal{
		"user A": {ua, 289_364_228}, "user B": {ub, 1_049_849_503},
		"vault A": {p.VaultA, 999_810_635_772}, "vault B": {p.VaultB, 5_000_950_150_497},
	})
	if got := e.lamports(user.addr); got != 1_000_000_000-2*5000 {
		t.Errorf("user lamports %d", got)
	}
	if got := chaintest.PoolAmountOut(1_000_000_000_000, 5_000_000_000_000, 10_000_000, 30); got != 49_849_503 {
		t.Errorf("PoolAmountOut %d", got)
	}
}

func TestPoolSwapTransferFeeMint(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	e.c.SetEpoch(2)
	user := e.wallet(1_000_000_000)
	fee := e.feeMint(e.wallet(0).addr) // Token-2022, 2% transfer fee, 9 decimals
	plain := e.classicMint(6)
	p, err := e.c.CreatePool(chaintest.PoolConfig{MintA: plain, MintB: fee, ReserveA: 1_000_000_000_000, ReserveB: 2_000_000_000_000, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	uf := e.mintTo(user.addr, fee, 5_000_000_000)
	up := e.mintTo(user.addr, plain, 100_000_000)

	// Fee mint in: 1e9 sent, 2e7 withheld on the vault, 9.8e8 received;
	// out = 1e12 × 9.8e8 × 9970 / (2e12 × 10000 + 9.8e8 × 9970).
	ix := e.swapIx(chaintest.PoolSwap{Pool: p, InputMint: fee, Authority: user.addr, Source: uf, Destination: up,
		InAmount: 1_000_000_000, QuotedOutAmount: 488_291_454, SlippageBps: 0})
	raw, _ := e.signedV0([]message.Instruction{ix}, nil, user)
	e.mustSendRaw(raw)
	e.balances(map[string]bal{
		"user fee": {uf, 4_000_000_000}, "user plain": {up, 588_291_454},
		"vault fee": {p.VaultB, 2_000_980_000_000}, "vault plain": {p.VaultA, 999_511_708_546},
	})
	if w, _ := e.tokenAccount(p.VaultB).TransferFeeAmount(); w.Withheld != 20_000_000 {
		t.Errorf("vault withheld %d", w.Withheld)
	}

	// Fee mint out: the pool sends 9_979_708, 199_595 is withheld on the
	// destination, which receives 9_780_113.
	ix = e.swapIx(chaintest.PoolSwap{Pool: p, InputMint: plain, Authority: user.addr, Source: up, Destination: uf,
		InAmount: 5_000_000, QuotedOutAmount: 9_979_708, SlippageBps: 0})
	raw, _ = e.signedV0([]message.Instruction{ix}, nil, user)
	sig := e.mustSendRaw(raw)
	e.balances(map[string]bal{
		"user fee": {uf, 4_009_780_113}, "user plain": {up, 583_291_454},
		"vault fee": {p.VaultB, 2_000_970_020_292}, "vault plain": {p.VaultA, 999_516_708_546},
	})
	if w, _ := e.tokenAccount(uf).TransferFeeAmount(); w.Withheld != 199_595 {
		t.Errorf("destination withheld %d", w.Withheld)
	}
	e.c.AdvanceSlots(1)
	if logs := strings.Join(logsOf(t, e, sig), "\n"); !strings.Contains(logs, "in_amount=5000000 out_amount=9979708") {
		t.Errorf("logs %s", logs)
	}
}

func TestPoolSlippageMovesNothingButTheFee(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	user := e.wallet(1_000_000_000)
	fee := e.feeMint(e.wallet(0).addr)
	plain := e.classicMint(6)
	p, err := e.c.CreatePool(chaintest.PoolConfig{MintA: plain, MintB: fee, ReserveA: 1_000_000_000_000, ReserveB: 2_000_000_000_000, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	uf := e.mintTo(user.addr, fee, 5_000_000_000)
	up := e.mintTo(user.addr, plain, 0)
	// The price moved: the quote of 488_291_454 at 1% slippage no longer holds.
	if err := e.c.SetPoolReserves(p.Address, 900_000_000_000, 2_000_000_000_000); err != nil {
		t.Fatal(err)
	}
	ix := e.swapIx(chaintest.PoolSwap{Pool: p, InputMint: fee, Authority: user.addr, Source: uf, Destination: up,
		InAmount: 1_000_000_000, QuotedOutAmount: 488_291_454, SlippageBps: 100})
	raw, _ := e.signedV0([]message.Instruction{ix}, nil, user)
	_, err = e.sendRaw(raw, false)
	if re := requireCode(t, err, -32002); re.Message != "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1771" {
		t.Errorf("preflight message %q", re.Message)
	}
	sig, err := e.sendRaw(raw, true)
	if err != nil {
		t.Fatal(err)
	}
	e.balances(map[string]bal{
		"user fee": {uf, 5_000_000_000}, "user plain": {up, 0},
		"vault fee": {p.VaultB, 2_000_000_000_000}, "vault plain": {p.VaultA, 900_000_000_000},
	})
	if w, _ := e.tokenAccount(p.VaultB).TransferFeeAmount(); w.Withheld != 0 {
		t.Errorf("withheld %d after a failed swap", w.Withheld)
	}
	if got := e.lamports(user.addr); got != 1_000_000_000-5000 {
		t.Errorf("user lamports %d", got)
	}
	st := e.status(solana.MustSignatureFromBase58(sig))
	if b, _ := json.Marshal(st.Err); string(b) != `{"InstructionError":[0,{"Custom":6001}]}` {
		t.Errorf("status err %s", b)
	}
	e.c.AdvanceSlots(1)
	logs := strings.Join(logsOf(t, e, sig), "\n")
	if !strings.Contains(logs, "Error Code: SlippageToleranceExceeded. Error Number: 6001.") || strings.Contains(logs, "out_amount") {
		t.Errorf("logs %s", logs)
	}
}

func TestPoolErrors(t *testing.T) {
	e := newEnv(t, chaintest.Config{})
	user := e.wallet(1_000_000_000)
	other := e.wallet(1_000_000_000)
	a := e.classicMint(6)
	b := e.plain2022Mint(9)
	c := e.plain2022Mint(9)
	p, err := e.c.CreatePool(chaintest.PoolConfig{MintA: a, MintB: b, ReserveA: 1_000_000, ReserveB: 1_000_000, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	ua := e.mintTo(user.addr, a, 1_000_000)
	ub := e.mintTo(user.addr, b, 0)
	uc := e.mintTo(user.addr, c, 0)
	oa := e.mintTo(other.addr, a, 1_000_000)
	_, notPool := chaintest.NewKeypair()
	e.c.SetAccount(notPool, chaintest.Account{Owner: chaintest.PoolProgramID(), Lamports: 1, Data: []byte("cppool00")})
	base := chaintest.PoolSwap{Pool: p, InputMint: a, Authority: user.addr, Source: ua, Destination: ub, InAmount: 1000, QuotedOutAmount: 990, SlippageBps: 100}

	custom := func(n uint32) string { return fmt.Sprintf(`{"InstructionError":[0,{"Custom":%d}]}`, n) }
	for _, tc := range []struct {
		name string
		edit func(*message.Instruction)
		want string
	}{
		{"ok", func(*message.Instruction) {}, "null"},
		{"no data", func(ix *message.Instruction) { ix.Data = ix.Data[:4] }, custom(chaintest.PoolErrInstructionMissing)},
		{"other instruction", func(ix *message.Instruction) { ix.Data[0]++ }, custom(chaintest.PoolErrInstructionFallbackNotFound)},
		{"short data", func(ix *message.Instruction) { ix.Data = ix.Data[:26] }, custom(chaintest.PoolErrInstructionDidNotDeserialize)},
		{"nine accounts", func(ix *message.Instruction) { ix.Accounts = ix.Accounts[:9] }, custom(6008)},
		{"platform fee", func(ix *message.Instruction) { ix.Data[26] = 1 }, custom(6003)},
		{"slippage above 100%", func(ix *message.Instruction) { binary.LittleEndian.PutUint16(ix.Data[24:], 10001) }, custom(6004)},
		{"authority not signing", func(ix *message.Instruction) { ix.Accounts[1].Signer = false }, `{"InstructionError":[0,"MissingRequiredSignature"]}`},
		{"read-only vault", func(ix *message.Instruction) { ix.Accounts[5].Writable = false }, custom(chaintest.PoolErrConstraintMut)},
		{"pool is a mint", func(ix *message.Instruction) { ix.Accounts[0].Key = b }, custom(chaintest.PoolErrAccountOwnedByWrongProgram)},
		{"pool data", func(ix *message.Instruction) { ix.Accounts[0].Key = notPool }, custom(chaintest.PoolErrAccountDiscriminatorMismatch)},
		{"output mint not the pool's", func(ix *message.Instruction) { ix.Accounts[7].Key = c; ix.Accounts[3].Key = uc }, custom(6025)},
		{"same mint both sides", func(ix *message.Instruction) { ix.Accounts[7].Key = a }, custom(6025)},
		{"input token program", func(ix *message.Instruction) { ix.Accounts[8].Key = chain.Address(solana.Token2022ProgramID) }, custom(6014)},
		{"output token program", func(ix *message.Instruction) { ix.Accounts[9].Key = chain.Address(solana.TokenProgramID) }, custom(6014)},
		{"vaults swapped", func(ix *message.Instruction) { ix.Accounts[4].Key, ix.Accounts[5].Key = p.VaultB, p.VaultA }, custom(6025)},
		{"vault in is the user's", func(ix *message.Instruction) { ix.Accounts[4].Key = oa }, custom(6025)},
		{"source of another owner", func(ix *message.Instruction) { ix.Accounts[2].Key = oa }, custom(6025)},
		{"destination of another mint", func(ix *message.Instruction) { ix.Accounts[3].Key = uc }, custom(6025)},
		{"destination missing", func(ix *message.Instruction) { ix.Accounts[3].Key = chain.Address{1} }, custom(6025)},
		{"more than the source holds", func(ix *message.Instruction) { binary.LittleEndian.PutUint64(ix.Data[8:], 1_000_001) }, custom(6024)},
		{"nothing out", func(ix *message.Instruction) {
			binary.LittleEndian.PutUint64(ix.Data[8:], 1)
			binary.LittleEndian.PutUint64(ix.Data[16:], 0)
		}, custom(6000)},
		{"below the quote", func(ix *message.Instruction) { binary.LittleEndian.PutUint64(ix.Data[16:], 1010) }, custom(6001)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := e.swapIx(base)
			tc.edit(&ix)
			raw, _ := e.signedV0([]message.Instruction{ix}, nil, other, user)
			sim, err := e.simulateRaw(raw)
			if err != nil {
				t.Fatal(err)
			}
			if jsonText(sim.Err) != tc.want {
				t.Errorf("err %s, want %s; logs %q", sim.Err, tc.want, sim.Logs)
			}
		})
	}
	// Nothing moved: simulations commit nothing.
	e.balances(map[string]bal{"user A": {ua, 1_000_000}, "vault A": {p.VaultA, 1_000_000}, "vault B": {p.VaultB, 1_000_000}})
}
