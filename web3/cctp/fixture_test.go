package cctp_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/evmrpc"
	"github.com/creatormusic/platform/web3/cctp/evmtest"
	"github.com/creatormusic/platform/web3/cctp/iris"
	"github.com/creatormusic/platform/web3/cctp/iristest"
)

// memStore is cctp.Store in memory: one map per table, the outbox and
// the audit log as lists. Units of work are not isolated (tests run one
// at a time).
type memStore struct {
	mu        sync.Mutex
	now       time.Time
	ids       int
	transfers map[string]cctp.Transfer
	evidence  []cctp.Evidence
	runs      []cctp.Readiness
	events    []outbox.Event
	audits    []account.AuditEvent
}

func newMemStore() *memStore {
	return &memStore{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), transfers: map[string]cctp.Transfer{}}
}

func (m *memStore) Now() time.Time { return m.now }

func (m *memStore) NewID(prefix string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids++
	return fmt.Sprintf("%s%04d", prefix, m.ids)
}

func (m *memStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
	return e, nil
}

func (m *memStore) AuditInsert(_ context.Context, e account.AuditEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.audits = append(m.audits, e)
	return nil
}

func (m *memStore) CCTPTransferInsert(_ context.Context, t cctp.Transfer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.transfers[t.ID]; ok {
		return fault.E("mem", fault.Conflict, "exists")
	}
	m.transfers[t.ID] = t
	return nil
}

func (m *memStore) CCTPTransfer(_ context.Context, o cctp.Owner, id string) (cctp.Transfer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.transfers[id]
	if !ok || t.Owner != o {
		return cctp.Transfer{}, fault.E("mem", fault.NotFound, "")
	}
	return t, nil
}

func (m *memStore) CCTPTransferIn(_ context.Context, env access.Environment, id string) (cctp.Transfer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.transfers[id]
	if !ok || t.Owner.Environment != env {
		return cctp.Transfer{}, fault.E("mem", fault.NotFound, "")
	}
	return t, nil
}

func (m *memStore) CCTPTransferUpdate(_ context.Context, t cctp.Transfer, prev int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.transfers[t.ID]
	if !ok || old.Version != prev {
		return fault.E("mem", fault.Conflict, "changed")
	}
	for _, o := range m.transfers {
		if o.ID == t.ID || o.Owner.Environment != t.Owner.Environment {
			continue
		}
		if (!t.BurnTxHash.IsZero() && o.SourceDomain == t.SourceDomain && o.BurnTxHash == t.BurnTxHash && o.BurnLogIndex == t.BurnLogIndex) ||
			(t.MintSignature != "" && o.MintSignature == t.MintSignature) {
			return fault.E("mem", fault.Conflict, "bound")
		}
	}
	m.transfers[t.ID] = t
	return nil
}

func (m *memStore) CCTPEvidenceInsert(_ context.Context, e cctp.Evidence) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evidence = append(m.evidence, e)
	return nil
}

func (m *memStore) CCTPEvidence(_ context.Context, id string) ([]cctp.Evidence, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []cctp.Evidence
	for _, e := range m.evidence {
		if e.TransferID == id {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memStore) CCTPReadinessInsert(_ context.Context, r cctp.Readiness) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs = append(m.runs, r)
	return nil
}

func (m *memStore) CCTPReadinessLatest(_ context.Context, env access.Environment, hash string) (cctp.Readiness, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range slices.Backward(m.runs) {
		if r.Environment == env && r.ConfigHash == hash && !r.Unreadable {
			return r, nil
		}
	}
	return cctp.Readiness{}, fault.E("mem", fault.NotFound, "")
}

// world is a service over the three simulators.
type world struct {
	t         *testing.T
	svc       *cctp.Service
	st        *memStore
	evm       *evmtest.Server
	iris      *iristest.Server
	sol       *chaintest.Cluster
	rpc       *solanarpc.Client
	usdc      chain.Address
	recipient chain.Address
	owner     ed25519Key
	feeAcc    chain.Address
	payer     ed25519Key
	p         *access.Principal
}

// ed25519Key is a Solana key pair.
type ed25519Key struct {
	priv ed25519.PrivateKey
	addr chain.Address
}

// newWorld starts the simulators and a service of the test environment
// over them; verified runs the readiness checks first.
func newWorld(t *testing.T, verified bool) *world {
	t.Helper()
	w := &world{t: t, st: newMemStore(), p: &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1",
		Environment: access.Test}}
	var err error
	if w.evm, err = evmtest.New(evmtest.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.evm.Close() })
	if w.iris, err = iristest.New(iristest.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.iris.Close() })
	if w.sol, err = chaintest.New(chaintest.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.sol.Close() })
	_, w.usdc = chaintest.NewKeypair()
	w.sol.SetAccount(w.usdc, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})})
	if err := w.sol.InstallCCTP(chaintest.CCTPConfig{Mint: w.usdc, VerifyAttestationFunc: w.iris.Verify}); err != nil {
		t.Fatal(err)
	}
	ownerPriv, owner := chaintest.NewKeypair()
	w.owner = ed25519Key{ownerPriv, owner}
	if w.recipient, err = w.sol.MintTo(owner, w.usdc, 0); err != nil {
		t.Fatal(err)
	}
	_, feeOwner := chaintest.NewKeypair()
	if w.feeAcc, err = w.sol.MintTo(feeOwner, w.usdc, 0); err != nil {
		t.Fatal(err)
	}
	payerPriv, payer := chaintest.NewKeypair()
	w.payer = ed25519Key{payerPriv, payer}
	w.sol.Airdrop(payer, 10_000_000_000)
	w.sol.Airdrop(owner, 1_000_000_000)
	w.sol.AdvanceSlots(40)
	if w.rpc, err = solanarpc.New(solanarpc.Config{URL: w.sol.URL(), HTTPClient: urlguardtest.Client(t, w.sol.URL())}); err != nil {
		t.Fatal(err)
	}
	evm, err := evmrpc.New(evmrpc.Config{URL: w.evm.URL(), HTTPClient: urlguardtest.Client(t, w.evm.URL())})
	if err != nil {
		t.Fatal(err)
	}
	att, err := iris.New(iris.Config{BaseURL: w.iris.URL(), HTTPClient: urlguardtest.Client(t, w.iris.URL())})
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.evm.Config()
	env := cctp.Environment{Sources: []cctp.EVMChain{{Domain: cfg.Domain, ChainID: cfg.ChainID, Client: evm,
		TokenMessenger: cfg.TokenMessenger, MessageTransmitter: cfg.MessageTransmitter, USDC: cfg.USDC}},
		Attestations: att, Solana: w.rpc, USDCMint: w.usdc, Attesters: w.iris.Attesters(), SignatureThreshold: w.iris.Threshold()}
	w.svc, err = cctp.New(cctp.Config{Environments: map[access.Environment]cctp.Environment{access.Test: env},
		Recovery: evmrpc.Recovery{}, Clock: w.st, Run: func(ctx context.Context, fn func(cctp.Store) error) error { return fn(w.st) }})
	if err != nil {
		t.Fatal(err)
	}
	if verified {
		if r, _, err := w.svc.Verify(context.Background(), access.Test); err != nil || !r.Passed {
			t.Fatalf("readiness: %+v, %v", r, err)
		}
	}
	return w
}

// create creates a transfer of amount to the recipient from Base.
func (w *world) create(amount uint64) cctp.Transfer {
	w.t.Helper()
	ctx := context.Background()
	t, err := w.svc.PrepareCreate(ctx, w.st, w.p, cctp.CreateInput{Amount: fmt.Sprint(amount), SourceDomain: int64(cctp.DomainBase),
		DestinationDomain: int64(cctp.DomainSolana), MintRecipient: w.recipient.String()})
	if err != nil {
		w.t.Fatalf("create: %v", err)
	}
	t, err = w.svc.RecordCreate(ctx, w.st, w.p, t, "req_1")
	if err != nil {
		w.t.Fatalf("record: %v", err)
	}
	return t
}

// burn mines a well-formed burn of amount to the recipient with maxFee.
func (w *world) burn(amount, maxFee uint64) evmtest.Burned {
	w.t.Helper()
	return w.burnWith(evmtest.Burn{Amount: amount, MaxFee: maxFee})
}

// burnWith mines b, filling the depositor and recipient when unset, and
// shows its messages to the attestation service (not indexed yet).
func (w *world) burnWith(b evmtest.Burn) evmtest.Burned {
	w.t.Helper()
	if b.Depositor.IsZero() {
		b.Depositor = cctp.EVMAddress{0xde, 0xad, 0xbe, 0xef}
	}
	if b.MintRecipient.IsZero() {
		b.MintRecipient = cctp.WordOfAddress(w.recipient)
	}
	burned, err := w.evm.Burn(b)
	if err != nil {
		w.t.Fatal(err)
	}
	w.iris.Observe(cctp.DomainBase, burned.TxHash, burned.Messages...)
	return burned
}

// step applies a step's result, failing the test on an error.
func (w *world) apply(r cctp.Result, err error) cctp.Transfer {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("step: %v", err)
	}
	t, err := w.svc.Apply(context.Background(), w.st, w.p, r, "req_2")
	if err != nil {
		w.t.Fatalf("apply: %v", err)
	}
	return t
}

// source verifies burned as t's burn.
func (w *world) source(t cctp.Transfer, burned evmtest.Burned) (cctp.Result, error) {
	return w.svc.VerifySource(context.Background(), w.st, w.p, t.ID, cctp.SourceInput{TxHash: burned.TxHash.String()})
}

// attest fetches t's attestation.
func (w *world) attest(t cctp.Transfer) (cctp.Result, error) {
	return w.svc.FetchAttestation(context.Background(), w.st, w.p, t.ID)
}

// mint relays msg with its attestation on the cluster (with extra
// instructions signed by extra), returning the signature.
func (w *world) mint(msg, att []byte, extra []message.Instruction, signers ...ed25519.PrivateKey) string {
	w.t.Helper()
	ix, err := chaintest.ReceiveMessageInstruction(w.payer.addr, w.recipient, w.feeAcc, w.usdc, msg, att)
	if err != nil {
		w.t.Fatal(err)
	}
	hash, _ := w.sol.LatestBlockhash()
	keys := append([]ed25519.PrivateKey{w.payer.priv}, signers...)
	wire, err := chaintest.SignedTransaction(w.payer.addr, hash.String(), append([]message.Instruction{ix}, extra...), keys...)
	if err != nil {
		w.t.Fatal(err)
	}
	sig, err := w.rpc.SendTransaction(context.Background(), wire, chain.SendOptions{SkipPreflight: true})
	if err != nil {
		w.t.Fatalf("send: %v", err)
	}
	w.sol.AdvanceSlots(2)
	return sig
}

// destination verifies sig as t's mint.
func (w *world) destination(t cctp.Transfer, sig string) (cctp.Result, error) {
	return w.svc.VerifyDestination(context.Background(), w.st, w.p, t.ID, cctp.DestinationInput{Signature: sig})
}

// attested completes burned's message with fee and returns it signed.
func (w *world) attested(burned evmtest.Burned, fee uint64) ([]byte, []byte) {
	w.t.Helper()
	msg, err := w.iris.Complete(cctp.DomainBase, burned.TxHash, 0, iristest.Attest{FeeExecuted: fee})
	if err != nil {
		w.t.Fatal(err)
	}
	return msg, w.iris.Sign(msg)
}

// code returns err's code.
func code(err error) fault.Code { return fault.CodeOf(err) }

// detail returns err's detail key.
func detail(err error, key string) any {
	_, _, d := fault.Public(err)
	return d[key]
}

// otherMintAccount creates an SPL Token mint other than USDC and a token
// account of it.
func (w *world) otherMintAccount() (mint, account chain.Address) {
	w.t.Helper()
	_, mint = chaintest.NewKeypair()
	w.sol.SetAccount(mint, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})})
	account, err := w.sol.MintTo(w.owner.addr, mint, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	return mint, account
}
