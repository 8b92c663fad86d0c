package chaintest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/internal/simctl"
)

// Config sets up a Cluster. Zero fields take the defaults.
type Config struct {
	SlotsPerEpoch uint64    // default 32
	ConfirmAfter  uint64    // slots from landing to confirmed; default 1
	FinalizeAfter uint64    // slots from landing to finalized; default 32
	Start         time.Time // block time of slot 0; default 2026-01-01T00:00:00Z; each slot adds 400ms
}

// Protocol constants the cluster applies (chain.md §3, §5.6, §10).
const (
	// SlotDuration is the block time between consecutive slots.
	SlotDuration = 400 * time.Millisecond
	// LamportsPerSignature is the fee charged per transaction signature.
	LamportsPerSignature = 5000
	// MaxBlockhashAge is how many slots a blockhash stays usable.
	MaxBlockhashAge = 150
	// blockhashesKept is how many recent slots' blockhashes are remembered.
	blockhashesKept = 300
)

// Well-known program ids (chain.md §4).
var (
	systemProgram     = chain.Address(solana.SystemProgramID)
	tokenProgram      = chain.Address(solana.TokenProgramID)
	token2022Program  = chain.Address(solana.Token2022ProgramID)
	ataProgram        = chain.Address(solana.SPLAssociatedTokenAccountProgramID)
	memoProgram       = chain.Address(solana.MemoProgramID)
	memoV1Program     = chain.Address(solana.MustPublicKeyFromBase58("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"))
	computeBudgetProg = chain.Address(solana.ComputeBudget)
)

// genesisSeed is what the cluster's genesis hash is the SHA-256 of.
const genesisSeed = "creatormusic/platform chain/chaintest loopback cluster genesis v1"

// Account is an account as the cluster stores it.
type Account struct {
	// Owner is the program owning the account.
	Owner chain.Address
	// Lamports is the balance.
	Lamports uint64
	// Data is the account's data.
	Data []byte
	// Executable marks a program account.
	Executable bool
}

// stored is an account inside the bank: immutable once stored (writers
// replace the pointer), with the owner's base58 precomputed for cheap reads.
type stored struct {
	Account
	ownerB58 string
}

func newStored(a Account) *stored {
	a.Data = append([]byte(nil), a.Data...)
	return &stored{Account: a, ownerB58: a.Owner.String()}
}

// Cluster is a loopback Solana cluster. It is safe for concurrent use.
type Cluster struct {
	cfg      Config
	genesis  string
	srv      *http.Server
	url      string
	run      *simctl.Runner // Run loops and delayed answers; stopped by Close
	closeOne sync.Once

	mu          sync.RWMutex
	slot        uint64
	hashGen     uint64            // bumped by ExpireBlockhashes
	hashes      map[string]uint64 // valid recent blockhash -> slot
	slotHash    map[uint64]string // slot -> its blockhash, recent slots only
	accounts    map[chain.Address]*stored
	txs         map[string]*txRecord // by base58 first signature
	byAddr      map[chain.Address][]*txRecord
	txCount     uint64
	dropNext    int
	failNext    int
	confirmXtra uint64
	cctp        *CCTPConfig // InstallCCTP's receive side; nil until installed

	faults simctl.Script[Fault] // by method; simctl.AnyKey for every method
	calls  sync.Map             // method -> *atomic.Int64
}

// New starts a cluster serving JSON-RPC on 127.0.0.1 at a free port.
func New(cfg Config) (*Cluster, error) {
	if cfg.SlotsPerEpoch == 0 {
		cfg.SlotsPerEpoch = 32
	}
	if cfg.ConfirmAfter == 0 {
		cfg.ConfirmAfter = 1
	}
	if cfg.FinalizeAfter == 0 {
		cfg.FinalizeAfter = 32
	}
	if cfg.FinalizeAfter < cfg.ConfirmAfter {
		return nil, fmt.Errorf("chaintest: FinalizeAfter %d is below ConfirmAfter %d", cfg.FinalizeAfter, cfg.ConfirmAfter)
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	sum := sha256.Sum256([]byte(genesisSeed))
	c := &Cluster{
		cfg:      cfg,
		genesis:  solana.Hash(sum).String(),
		run:      simctl.NewRunner(simctl.RunnerConfig{}),
		hashes:   make(map[string]uint64),
		slotHash: make(map[uint64]string),
		accounts: make(map[chain.Address]*stored),
		txs:      make(map[string]*txRecord),
		byAddr:   make(map[chain.Address][]*txRecord),
	}
	c.issueBlockhash(0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaintest: listen: %w", err)
	}
	c.url = "http://" + ln.Addr().String()
	c.srv = &http.Server{Handler: http.HandlerFunc(c.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// URL is the JSON-RPC endpoint, http://127.0.0.1:port.
func (c *Cluster) URL() string { return c.url }

// Close stops the server, aborts delayed answers and stops Run loops.
func (c *Cluster) Close() error {
	var err error
	c.closeOne.Do(func() {
		c.run.Stop()
		err = c.srv.Close()
		c.run.Wait()
	})
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// GenesisHash is the cluster's genesis hash in base58.
func (c *Cluster) GenesisHash() string { return c.genesis }

// Network is the cluster's network: a localnet named by its genesis hash.
func (c *Cluster) Network() chain.Network { return chain.Network{GenesisHash: c.genesis} }

// Slot is the current (processed) slot.
func (c *Cluster) Slot() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.slot
}

// Epoch is the current epoch.
func (c *Cluster) Epoch() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.slot / c.cfg.SlotsPerEpoch
}

// BlockTime is the block time of slot.
func (c *Cluster) BlockTime(slot uint64) time.Time {
	return c.cfg.Start.Add(time.Duration(slot) * SlotDuration)
}

// AdvanceSlots produces n new blocks: each gets a new blockhash, and landed
// transactions move towards confirmed and finalized.
func (c *Cluster) AdvanceSlots(n uint64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advanceLocked(n)
}

func (c *Cluster) advanceLocked(n uint64) {
	from := c.slot + 1
	c.slot += n
	if n > blockhashesKept {
		from = c.slot - blockhashesKept + 1
	}
	for s := from; s <= c.slot; s++ {
		c.issueBlockhash(s)
	}
	// Forget blockhashes older than blockhashesKept slots.
	if c.slot >= blockhashesKept {
		for h, s := range c.hashes {
			if s+blockhashesKept <= c.slot {
				delete(c.hashes, h)
			}
		}
		for s := range c.slotHash {
			if s+blockhashesKept <= c.slot {
				delete(c.slotHash, s)
			}
		}
	}
}

// issueBlockhash derives and records slot's blockhash. Callers hold mu (or
// own c exclusively).
func (c *Cluster) issueBlockhash(slot uint64) {
	var b [8 + 8 + 32]byte
	binary.LittleEndian.PutUint64(b[0:], slot)
	binary.LittleEndian.PutUint64(b[8:], c.hashGen)
	copy(b[16:], c.genesis)
	sum := sha256.Sum256(append([]byte("chaintest blockhash"), b[:]...))
	h := solana.Hash(sum).String()
	c.hashes[h] = slot
	c.slotHash[slot] = h
}

// SetEpoch moves the clock forward so the current slot is the first slot of
// epoch. An epoch whose first slot is not after the current slot leaves the
// clock where it is: the cluster never goes back in time.
func (c *Cluster) SetEpoch(epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := epoch * c.cfg.SlotsPerEpoch
	if target > c.slot {
		c.advanceLocked(target - c.slot)
	}
}

// Run advances one slot per interval in the background until stop is called
// or the cluster is closed. stop waits for the loop to end and may be called
// more than once.
func (c *Cluster) Run(interval time.Duration) (stop func()) {
	return c.run.Every(interval, func(context.Context) bool {
		c.AdvanceSlots(1)
		return true
	})
}

// ExpireBlockhashes makes every blockhash issued so far invalid; the
// current slot gets a fresh blockhash that getLatestBlockhash returns.
func (c *Cluster) ExpireBlockhashes() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.hashes)
	clear(c.slotHash)
	c.hashGen++
	c.issueBlockhash(c.slot)
}

// LatestBlockhash is the current slot's blockhash and the last block height
// at which it is valid.
func (c *Cluster) LatestBlockhash() (solana.Hash, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	h, s := c.latestBlockhashLocked(c.slot)
	return solana.MustHashFromBase58(h), s + MaxBlockhashAge
}

// latestBlockhashLocked is the newest valid blockhash of a slot at or
// before at, else the current slot's, with its slot.
func (c *Cluster) latestBlockhashLocked(at uint64) (string, uint64) {
	for s := at; ; s-- {
		if h, ok := c.slotHash[s]; ok {
			return h, s
		}
		if s == 0 || s+blockhashesKept <= at {
			break
		}
	}
	return c.slotHash[c.slot], c.slot
}

// blockhashValidLocked reports whether h may still be used at the current
// slot.
func (c *Cluster) blockhashValidLocked(h string) bool {
	s, ok := c.hashes[h]
	return ok && c.slot-s <= MaxBlockhashAge
}

// DropTransactions makes the next n accepted sendTransaction calls return
// their signature without the transaction ever landing.
func (c *Cluster) DropTransactions(n int) {
	c.mu.Lock()
	c.dropNext = n
	c.mu.Unlock()
}

// FailTransactions makes the next n landing transactions fail with
// InstructionError [0, Custom(1)]: they change nothing but pay their fee.
func (c *Cluster) FailTransactions(n int) {
	c.mu.Lock()
	c.failNext = n
	c.mu.Unlock()
}

// ConfirmDelay adds slots before transactions landing from now on are
// confirmed (and finalized no earlier). ConfirmDelay(0) restores the
// configured pace.
func (c *Cluster) ConfirmDelay(slots uint64) {
	c.mu.Lock()
	c.confirmXtra = slots
	c.mu.Unlock()
}

// SetAccount stores a (a copy of its data) at addr, replacing any account
// there.
func (c *Cluster) SetAccount(addr chain.Address, a Account) {
	s := newStored(a)
	c.mu.Lock()
	c.accounts[addr] = s
	c.mu.Unlock()
}

// DeleteAccount removes the account at addr.
func (c *Cluster) DeleteAccount(addr chain.Address) {
	c.mu.Lock()
	delete(c.accounts, addr)
	c.mu.Unlock()
}

// Account returns the account at addr (a copy), if any.
func (c *Cluster) Account(addr chain.Address) (Account, bool) {
	c.mu.RLock()
	s, ok := c.accounts[addr]
	c.mu.RUnlock()
	if !ok {
		return Account{}, false
	}
	a := s.Account
	a.Data = append([]byte(nil), a.Data...)
	return a, true
}

// Airdrop credits lamports to addr, creating a System-owned account if
// there is none.
func (c *Cluster) Airdrop(addr chain.Address, lamports uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := Account{Owner: systemProgram}
	if s, ok := c.accounts[addr]; ok {
		a = s.Account
	}
	a.Lamports += lamports
	c.accounts[addr] = newStored(a)
}

// RentExemptMinimum is the rent-exempt balance of an account of dataLen
// bytes: (128 + dataLen) × 6960 lamports.
func RentExemptMinimum(dataLen int) uint64 {
	return (128 + uint64(dataLen)) * 6960
}

// CreateMint stores m at addr as a Token-2022 mint (EncodeMint bytes,
// rent-exempt lamports). It fails if an account exists there.
func (c *Cluster) CreateMint(addr chain.Address, m token2022.Mint) error {
	data, err := encodeMint(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.accounts[addr]; ok {
		return fmt.Errorf("chaintest: CreateMint: an account exists at %s", addr)
	}
	c.accounts[addr] = newStored(Account{Owner: token2022Program, Lamports: RentExemptMinimum(len(data)), Data: data})
	return nil
}

// SetMint rewrites the mint at addr with m, keeping its owner (Token-2022 if
// the account does not exist) and topping lamports up to rent exemption.
func (c *Cluster) SetMint(addr chain.Address, m token2022.Mint) error {
	data, err := encodeMint(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a := Account{Owner: token2022Program}
	if s, ok := c.accounts[addr]; ok {
		a = s.Account
	}
	a.Data = data
	a.Lamports = max(a.Lamports, RentExemptMinimum(len(data)))
	c.accounts[addr] = newStored(a)
	return nil
}

func encodeMint(m token2022.Mint) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chaintest: encode mint: %v", r)
		}
	}()
	return token2022.EncodeMint(m), nil
}

// MintTo adds amount to wallet's associated token account for mint,
// creating it (with the extensions its mint requires) if absent, and raises
// the mint's supply. The token program is the mint account's owner. It
// returns the associated token account's address.
func (c *Cluster) MintTo(wallet, mint chain.Address, amount uint64) (chain.Address, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ms, ok := c.accounts[mint]
	if !ok {
		return chain.Address{}, fmt.Errorf("chaintest: MintTo: no mint at %s", mint)
	}
	prog := ms.Owner
	if prog != tokenProgram && prog != token2022Program {
		return chain.Address{}, fmt.Errorf("chaintest: MintTo: %s is owned by %s, not a token program", mint, prog)
	}
	m, err := token2022.DecodeMint(ms.Data)
	if err != nil {
		return chain.Address{}, fmt.Errorf("chaintest: MintTo: %w", err)
	}
	if m.Supply+amount < m.Supply {
		return chain.Address{}, fmt.Errorf("chaintest: MintTo: supply overflow")
	}
	ata := AssociatedTokenAddress(wallet, mint, prog)
	var acct token2022.Account
	if s, ok := c.accounts[ata]; ok {
		acct, err = token2022.DecodeAccount(s.Data)
		if err != nil || s.Owner != prog {
			return chain.Address{}, fmt.Errorf("chaintest: MintTo: %s is not a token account of %s", ata, prog)
		}
		if acct.Amount+amount < acct.Amount {
			return chain.Address{}, fmt.Errorf("chaintest: MintTo: balance overflow")
		}
	} else {
		acct = newTokenAccount(prog, mint, m, wallet)
	}
	acct.Amount += amount
	m.Supply += amount
	mdata, err := encodeMint(m)
	if err != nil {
		return chain.Address{}, err
	}
	ma := ms.Account
	ma.Data = mdata
	c.accounts[mint] = newStored(ma)
	adata := token2022.EncodeAccount(acct)
	lamports := RentExemptMinimum(len(adata))
	if s, ok := c.accounts[ata]; ok {
		lamports = s.Lamports
	}
	c.accounts[ata] = newStored(Account{Owner: prog, Lamports: lamports, Data: adata})
	return ata, nil
}

// newTokenAccount is an initialized token account of mint for owner as the
// Associated Token Account program creates it: on Token-2022 with
// ImmutableOwner first, then the extensions the mint requires.
func newTokenAccount(prog, mintAddr chain.Address, m token2022.Mint, owner chain.Address) token2022.Account {
	a := token2022.Account{Mint: mintAddr, Owner: owner, State: token2022.StateInitialized}
	if prog != token2022Program {
		return a
	}
	a.Extensions = []token2022.Extension{token2022.RawExtension{Type: token2022.ExtensionImmutableOwner}}
	for _, e := range m.Extensions {
		switch e.ExtensionType() {
		case token2022.ExtensionTransferFeeConfig:
			a.Extensions = append(a.Extensions, token2022.TransferFeeAmount{})
		case token2022.ExtensionNonTransferable:
			a.Extensions = append(a.Extensions, token2022.RawExtension{Type: token2022.ExtensionNonTransferableAccount})
		case token2022.ExtensionTransferHook:
			a.Extensions = append(a.Extensions, token2022.RawExtension{Type: token2022.ExtensionTransferHookAccount, Value: []byte{0}})
		case token2022.ExtensionPausable:
			a.Extensions = append(a.Extensions, token2022.RawExtension{Type: token2022.ExtensionPausableAccount})
		case token2022.ExtensionDefaultAccountState:
			if r, ok := e.(token2022.RawExtension); ok && len(r.Value) == 1 && r.Value[0] == byte(token2022.StateFrozen) {
				a.State = token2022.StateFrozen
			}
		}
	}
	return a
}

// AssociatedTokenAddress derives the associated token account of wallet
// for mint under tokenProgram (classic SPL Token or Token-2022; the two
// give different addresses).
func AssociatedTokenAddress(wallet, mint, tokenProgram chain.Address) chain.Address {
	addr, _, err := solana.FindProgramAddress([][]byte{wallet[:], tokenProgram[:], mint[:]}, solana.PublicKey(ataProgram))
	if err != nil {
		// Unreachable: some bump of 255 seeds always gives an off-curve point.
		panic("chaintest: no associated token address: " + err.Error())
	}
	return chain.Address(addr)
}

// NewKeypair returns a fresh ed25519 key pair and its address.
func NewKeypair() (priv ed25519.PrivateKey, addr chain.Address) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic("chaintest: ed25519 key generation: " + err.Error())
	}
	copy(addr[:], pub)
	return priv, addr
}

// commitmentSlot is the slot a read at commitment answers at.
func (c *Cluster) commitmentSlotLocked(cm chain.Commitment) uint64 {
	lag := uint64(0)
	switch cm {
	case chain.Confirmed:
		lag = c.cfg.ConfirmAfter
	case chain.Processed:
	default:
		lag = c.cfg.FinalizeAfter
	}
	if c.slot < lag {
		return 0
	}
	return c.slot - lag
}
