package intent

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeWallets verifies the addresses in its set.
type fakeWallets struct{ verified map[chain.Address]bool }

func (w fakeWallets) Verified(_ context.Context, _, _ string, a chain.Address) (bool, error) {
	return w.verified[a], nil
}

// memData is the store's committed state.
type memData struct {
	intents    map[string]Intent
	sigs       map[string]string
	requests   map[string]PaymentRequest
	reqByIntnt map[string]string
	recs       map[string]Reconciliation // by intent id
	// events and jobs are the outbox events and jobs written, in order
	// (a job whose unique key was taken is not).
	events []outbox.Event
	jobs   []jobs.InsertParams
	// policies holds the published versions of each policy, by
	// environment and id, oldest first.
	policies map[string][]policy.Version
	// movements are the posted ledger movements; accounts the ledger's
	// accounts by scope, ledger and name.
	movements []ledger.Posted
	accounts  map[string]ledger.Account
	seq       int
}

func (d memData) clone() memData {
	c := memData{intents: map[string]Intent{}, sigs: map[string]string{}, requests: map[string]PaymentRequest{}, reqByIntnt: map[string]string{},
		recs: map[string]Reconciliation{}, events: slices.Clone(d.events), jobs: slices.Clone(d.jobs),
		policies: map[string][]policy.Version{}, movements: slices.Clone(d.movements), accounts: maps.Clone(d.accounts), seq: d.seq}
	if c.accounts == nil {
		c.accounts = map[string]ledger.Account{}
	}
	for k, v := range d.policies {
		c.policies[k] = slices.Clone(v)
	}
	for k, v := range d.recs {
		c.recs[k] = v
	}
	for k, v := range d.intents {
		c.intents[k] = v
	}
	for k, v := range d.sigs {
		c.sigs[k] = v
	}
	for k, v := range d.requests {
		c.requests[k] = v
	}
	for k, v := range d.reqByIntnt {
		c.reqByIntnt[k] = v
	}
	return c
}

// memStore is a transactional in-memory Store: Run works on a copy and
// commits it when fn succeeds, then runs the unit's AfterCommit functions.
type memStore struct {
	mu     sync.Mutex
	data   memData
	writes int
	// nowFunc is the units' clock; nil means a fixed time.
	nowFunc func() time.Time
}

func newMemStore() *memStore {
	return &memStore{data: memData{}.clone()}
}

func (m *memStore) tx() *memTx {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if m.nowFunc != nil {
		now = m.nowFunc()
	}
	return &memTx{d: m.data.clone(), now: now}
}

func (m *memStore) Run(ctx context.Context, fn func(st Store) error) error {
	m.mu.Lock()
	tx := m.tx()
	if err := fn(tx); err != nil {
		m.mu.Unlock()
		return err
	}
	m.data = tx.d
	m.writes++
	m.mu.Unlock()
	for _, f := range tx.onCommit {
		f()
	}
	return nil
}

func (m *memStore) Read() Store {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tx()
}

// committed returns a copy of the committed state.
func (m *memStore) committed() memData {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data.clone()
}

func (m *memStore) intent(id string) Intent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data.intents[id]
}

func (m *memStore) put(it Intent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data.intents[it.ID] = it
}

// memTx is one unit of work (or a read snapshot). It is also the unit's
// CreditStore, as the platform's store is.
type memTx struct {
	d        memData
	now      time.Time
	onCommit []func()
}

var (
	_ Store       = (*memTx)(nil)
	_ CreditStore = (*memTx)(nil)
)

func (t *memTx) Now() time.Time           { return t.now }
func (t *memTx) AfterCommit(fn func())    { t.onCommit = append(t.onCommit, fn) }
func (t *memTx) CreditStore() CreditStore { return t }
func (t *memTx) NewID(prefix string) string {
	t.d.seq++
	return fmt.Sprintf("%s%04d", prefix, t.d.seq)
}
func (t *memTx) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	e.ID = t.NewID("evt_")
	t.d.events = append(t.d.events, e)
	return e, nil
}
func (t *memTx) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	if p.UniqueKey != "" && slices.ContainsFunc(t.d.jobs, func(q jobs.InsertParams) bool { return q.UniqueKey == p.UniqueKey }) {
		return false, nil
	}
	t.d.jobs = append(t.d.jobs, p)
	return true, nil
}

func notFound() error { return fault.E("mem", fault.NotFound, "not found") }
func conflict() error { return fault.E("mem", fault.Conflict, "conflict") }

func (t *memTx) InsertIntent(_ context.Context, it Intent) error {
	if _, ok := t.d.intents[it.ID]; ok {
		return conflict()
	}
	t.d.intents[it.ID] = it
	return nil
}
func (t *memTx) Intent(_ context.Context, id string) (Intent, error) {
	it, ok := t.d.intents[id]
	if !ok {
		return Intent{}, notFound()
	}
	return it, nil
}
func (t *memTx) LockIntent(ctx context.Context, id string) (Intent, error) { return t.Intent(ctx, id) }
func (t *memTx) UpdateIntent(_ context.Context, it Intent, prev int64) error {
	cur, ok := t.d.intents[it.ID]
	if !ok || cur.Version != prev || it.Version != prev+1 {
		return conflict()
	}
	t.d.intents[it.ID] = it
	return nil
}
func (t *memTx) BindSignature(_ context.Context, sig, id string) error {
	if other, ok := t.d.sigs[sig]; ok && other != id {
		return conflict()
	}
	t.d.sigs[sig] = id
	return nil
}
func (t *memTx) SignatureIntent(_ context.Context, sig string) (string, error) {
	id, ok := t.d.sigs[sig]
	if !ok {
		return "", notFound()
	}
	return id, nil
}
func (t *memTx) InsertPaymentRequest(_ context.Context, pr PaymentRequest) error {
	if _, ok := t.d.reqByIntnt[pr.IntentID]; ok {
		return conflict()
	}
	t.d.requests[pr.ID] = pr
	t.d.reqByIntnt[pr.IntentID] = pr.ID
	return nil
}
func (t *memTx) PaymentRequest(_ context.Context, id string) (PaymentRequest, error) {
	pr, ok := t.d.requests[id]
	if !ok {
		return PaymentRequest{}, notFound()
	}
	return pr, nil
}
func (t *memTx) PaymentRequestByIntent(ctx context.Context, id string) (PaymentRequest, error) {
	pid, ok := t.d.reqByIntnt[id]
	if !ok {
		return PaymentRequest{}, notFound()
	}
	return t.PaymentRequest(ctx, pid)
}
func (t *memTx) IntentsToReconcile(_ context.Context, limit int) ([]Intent, error) {
	var out []Intent
	for _, it := range t.d.intents {
		if it.State.Pending() {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b Intent) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (t *memTx) InsertReconciliation(_ context.Context, r Reconciliation) error {
	if _, ok := t.d.recs[r.IntentID]; ok {
		return conflict()
	}
	for _, x := range t.d.recs {
		if x.ID == r.ID {
			return conflict()
		}
	}
	t.d.recs[r.IntentID] = r
	return nil
}
func (t *memTx) Reconciliation(_ context.Context, intentID string) (Reconciliation, error) {
	r, ok := t.d.recs[intentID]
	if !ok {
		return Reconciliation{}, notFound()
	}
	return r, nil
}

// fakeChain is a scriptable ChainClient.
type fakeChain struct {
	mu        sync.Mutex
	genesis   string
	epoch     chain.EpochInfo
	accounts  map[chain.Address]chain.AccountInfo
	blockhash chain.Blockhash
	height    uint64 // finalized block height
	valid     bool   // IsBlockhashValid answer
	statuses  map[string]*chain.SignatureStatus
	txs       map[string]chain.Transaction
	refs      map[chain.Address][]chain.SignatureInfo
	sendErrs  []error // answers of the next sends, in order; nil = accept
	sent      [][]byte
	onSend    func(b []byte) // runs on an accepted send
	failRead  error          // when set, every read fails with it
	calls     map[string]int
}

var _ ChainClient = (*fakeChain)(nil)

func (f *fakeChain) call(m string) error {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[m]++
	return f.failRead
}

func (f *fakeChain) GetGenesisHash(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getGenesisHash"); err != nil {
		return "", err
	}
	return f.genesis, nil
}
func (f *fakeChain) GetEpochInfo(context.Context, chain.Commitment) (chain.EpochInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getEpochInfo"); err != nil {
		return chain.EpochInfo{}, err
	}
	return f.epoch, nil
}
func (f *fakeChain) GetAccountInfo(_ context.Context, a chain.Address, _ chain.Commitment) (chain.AccountInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getAccountInfo"); err != nil {
		return chain.AccountInfo{}, err
	}
	acc, ok := f.accounts[a]
	if !ok {
		return chain.AccountInfo{}, chain.ErrAccountNotFound
	}
	return acc, nil
}
func (f *fakeChain) GetLatestBlockhash(context.Context, chain.Commitment) (chain.Blockhash, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getLatestBlockhash"); err != nil {
		return chain.Blockhash{}, err
	}
	return f.blockhash, nil
}
func (f *fakeChain) GetBlockHeight(context.Context, chain.Commitment) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getBlockHeight"); err != nil {
		return 0, err
	}
	return f.height, nil
}
func (f *fakeChain) IsBlockhashValid(context.Context, string, chain.Commitment) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("isBlockhashValid"); err != nil {
		return false, err
	}
	return f.valid, nil
}
func (f *fakeChain) SendTransaction(_ context.Context, b []byte, _ chain.SendOptions) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("sendTransaction")
	f.sent = append(f.sent, slices.Clone(b))
	if len(f.sendErrs) > 0 {
		err := f.sendErrs[0]
		f.sendErrs = f.sendErrs[1:]
		if err != nil {
			return "", err
		}
	}
	if f.onSend != nil {
		f.onSend(b)
	}
	return token2022.EncodeBase58(b[1:65]), nil
}
func (f *fakeChain) GetSignatureStatuses(_ context.Context, sigs []string, _ bool) ([]*chain.SignatureStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getSignatureStatuses"); err != nil {
		return nil, err
	}
	out := make([]*chain.SignatureStatus, len(sigs))
	for i, s := range sigs {
		if st, ok := f.statuses[s]; ok {
			c := *st
			out[i] = &c
		}
	}
	return out, nil
}
func (f *fakeChain) GetTransaction(_ context.Context, sig string, _ chain.Commitment) (chain.Transaction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getTransaction"); err != nil {
		return chain.Transaction{}, err
	}
	tx, ok := f.txs[sig]
	if !ok {
		return chain.Transaction{}, chain.ErrTransactionNotFound
	}
	return tx, nil
}
func (f *fakeChain) GetSignaturesForAddress(_ context.Context, a chain.Address, _ chain.SignaturesOptions, _ chain.Commitment) ([]chain.SignatureInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getSignaturesForAddress"); err != nil {
		return nil, err
	}
	return slices.Clone(f.refs[a]), nil
}

func (f *fakeChain) setStatus(sig string, c chain.Commitment, errJSON string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[sig] = &chain.SignatureStatus{Slot: 77, Status: c, Err: errJSON}
}

func (f *fakeChain) count(m string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[m]
}

// key returns a deterministic test address.
func key(name string) chain.Address { return chain.Address(sha256.Sum256([]byte(name))) }

// keypair returns a deterministic ed25519 key pair.
func keypair(name string) (ed25519.PrivateKey, chain.Address) {
	seed := sha256.Sum256([]byte("seed:" + name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return priv, chain.Address(priv.Public().(ed25519.PublicKey))
}

// harness wires a Service over the fakes.
type harness struct {
	t        *testing.T
	svc      *Service
	store    *memStore
	chain    *fakeChain
	clock    *fakeClock
	payer    chain.Address
	payerKey ed25519.PrivateKey
	treasury chain.Address
	mint     chain.Address
	settled  []string // business references the Settle hook saw
	user     *access.Principal
	registry *Registry
	// ledger holds the movements the Settle hook "wrote", by business
	// reference, as the Settlement reader reads them back; tests tamper
	// with it.
	ledger map[string][]SettlementMovement
}

// settle is a Settle hook that records a grant of it.Quantity in the
// intent's scope.
func (h *harness) settle(_ context.Context, _ Store, it Intent) error {
	h.settled = append(h.settled, it.BusinessReference)
	q, err := strconv.ParseUint(it.Quantity, 10, 64)
	if err != nil {
		return err
	}
	h.ledger[it.BusinessReference] = append(h.ledger[it.BusinessReference], SettlementMovement{
		ID: "mov_" + it.ID, Reference: "grant:" + it.BusinessReference, Scope: it.Actor.Scope(),
		Postings: []SettlementPosting{{Account: "system:grants", Amount: money.Atomic(q)}, {Account: "workspace:credits", Credit: true, Amount: money.Atomic(q)}},
	})
	return nil
}

// settlement is the Settlement reader over h.ledger.
func (h *harness) settlement(_ context.Context, _ Store, it Intent) (Settlement, error) {
	return Settlement{Credit: "workspace:credits", Debit: "system:grants", Movements: slices.Clone(h.ledger[it.BusinessReference])}, nil
}

// feeMint is a Token-2022 mint with a 200 bps fee capped at maxFee.
func feeMint(decimals uint8, bps uint16, maxFee uint64) token2022.Mint {
	tf := token2022.TransferFee{Epoch: 0, MaximumFee: maxFee, BasisPoints: bps}
	return token2022.Mint{Decimals: decimals, IsInitialized: true, Supply: 1e15,
		Extensions: []token2022.Extension{token2022.TransferFeeConfig{Older: tf, Newer: tf}}}
}

type harnessOpt func(*harness, *Config)

func newHarness(t *testing.T, mint token2022.Mint, opts ...harnessOpt) *harness {
	t.Helper()
	h := &harness{t: t, store: newMemStore(), clock: &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		ledger: map[string][]SettlementMovement{}}
	h.store.nowFunc = h.clock.Now
	h.payerKey, h.payer = keypair("payer")
	h.treasury = key("treasury")
	h.mint = key("mint")
	h.chain = &fakeChain{
		genesis:   chain.DevnetGenesisHash,
		epoch:     chain.EpochInfo{Epoch: 5, BlockHeight: 1000},
		accounts:  map[chain.Address]chain.AccountInfo{h.mint: {Address: h.mint, Owner: token2022.ProgramID(), Data: token2022.EncodeMint(mint)}},
		blockhash: chain.Blockhash{Hash: key("blockhash").String(), LastValidBlockHeight: 1150},
		height:    1000, valid: true,
		statuses: map[string]*chain.SignatureStatus{}, txs: map[string]chain.Transaction{}, refs: map[chain.Address][]chain.SignatureInfo{},
	}
	h.registry = NewRegistry()
	packs := CreditPacks{Packs: []CreditPack{
		{Credits: "100", Prices: map[string]string{h.mint.String(): "1000000"}},
		{Credits: "500", Prices: map[string]string{h.mint.String(): "4500000"}},
	}}
	ref := PolicyRef{ID: CreditPacksPolicyID, Version: 3, Hash: "abc"}
	err := h.registry.Register(CreditPurchase(
		func(context.Context, access.Environment) (CreditPacks, PolicyRef, error) { return packs, ref, nil },
		h.settle, h.settlement))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	cfg := Config{
		Registry:     h.registry,
		Environments: map[access.Environment]Environment{access.Test: {Client: h.chain, Treasury: h.treasury}},
		Wallets:      fakeWallets{verified: map[chain.Address]bool{h.payer: true}},
		Clock:        h.clock,
		Run:          h.store.Run,
		ReadFunc:     h.store.Read,
		ReferenceKey: []byte("0123456789abcdef0123456789abcdef"),
		NewIDFunc:    func() string { n++; return "id" + string(rune('a'+n-1)) },
	}
	for _, o := range opts {
		o(h, &cfg)
	}
	h.svc, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.user = &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", SessionID: "ses_1", Environment: access.Test}
	return h
}

// create makes a credit_purchase intent of 100 credits.
func (h *harness) create() Intent {
	h.t.Helper()
	it, err := h.svc.Create(context.Background(), h.user, Request{Purpose: PurposeCreditPurchase, Credits: "100", Mint: h.mint.String(), Wallet: h.payer.String()})
	if err != nil {
		h.t.Fatal(err)
	}
	return it
}

// sign signs it's prepared message with the payer key and returns the
// signature and the signed wire bytes.
func (h *harness) sign(it Intent) (string, []byte) {
	sig := ed25519.Sign(h.payerKey, it.Transaction.Message)
	b := message.AppendCompactU16(nil, 1)
	b = append(b, sig...)
	b = append(b, it.Transaction.Message...)
	return token2022.EncodeBase58(sig), b
}

// submitSigned signs and submits it with the signed bytes.
func (h *harness) submitSigned(it Intent) Intent {
	h.t.Helper()
	sig, b := h.sign(it)
	out, err := h.svc.Submit(context.Background(), h.user, it.ID, SubmitRequest{Signature: sig, SignedTransactionBase64: base64Std(b)})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// landed returns the chain record of a successful prepared transfer of it
// under sig, with the destination growing by net.
func landed(it Intent, sig string, net uint64) chain.Transaction {
	keys := []chain.Address{it.Payer, it.Source, it.Destination, message.MemoProgramID(), it.Mint, it.Reference, it.TokenProgram}
	return chain.Transaction{
		Signature: sig, Slot: 80, AccountKeys: keys, NumSigners: 1,
		Instructions: []chain.Instruction{
			{ProgramID: message.MemoProgramID(), Data: []byte(it.Memo)},
			{ProgramID: it.TokenProgram, Accounts: []chain.Address{it.Source, it.Mint, it.Destination, it.Payer, it.Reference},
				Data: transferData(it.GrossAtomic, it.Decimals, it.HasTransferFee, it.FeeAtomic)},
		},
		PreTokenBalances: []chain.TokenBalance{{AccountIndex: 2, Account: it.Destination, Mint: it.Mint, Owner: it.Recipient, Amount: 500}},
		PostTokenBalances: []chain.TokenBalance{{AccountIndex: 2, Account: it.Destination, Mint: it.Mint, Owner: it.Recipient, Amount: 500 + net},
			{AccountIndex: 1, Account: it.Source, Mint: it.Mint, Owner: it.Payer, Amount: 0}},
	}
}

// must fails the test on err.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code fault.Code) {
	t.Helper()
	if !fault.Is(err, code) {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// errTimeout is a send that got no answer.
func errTimeout() error { return fmt.Errorf("%w: context deadline exceeded", chain.ErrUnavailable) }

// transferData is the data of the transfer an intent's transaction
// carries: TransferCheckedWithFee when withFee, else TransferChecked.
func transferData(amount uint64, decimals uint8, withFee bool, fee uint64) []byte {
	var k chain.Address
	if withFee {
		return message.TransferCheckedWithFee(k, k, k, k, amount, decimals, fee).Data
	}
	return message.TransferChecked(k, k, k, k, k, amount, decimals).Data
}
