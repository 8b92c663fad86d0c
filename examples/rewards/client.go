package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/examples/internal/democlient"
)

// credentials are the fields of demo-credentials.json the command uses.
type credentials struct {
	APIKey        string `json:"apiKey"`
	OwnerEmail    string `json:"ownerEmail"`
	OwnerPassword string `json:"ownerPassword"`
	// Guest is the guest account, of its own tenant.
	Guest *struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	} `json:"guest"`
}

// readCredentials reads the demo credentials the host wrote in data.
func readCredentials(data string) (credentials, error) {
	var cred credentials
	path := filepath.Join(data, "demo-credentials.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return cred, fmt.Errorf("read the demo credentials (start the host first): %w", err)
	}
	if err := json.Unmarshal(b, &cred); err != nil {
		return cred, fmt.Errorf("read %s: %w", path, err)
	}
	if cred.OwnerEmail == "" || cred.OwnerPassword == "" || cred.APIKey == "" {
		return cred, fmt.Errorf("%s holds no demo owner's email, password and key", path)
	}
	if cred.Guest == nil || cred.Guest.Email == "" || cred.Guest.Password == "" {
		return cred, fmt.Errorf("%s holds no guest account: restart the host to add it", path)
	}
	return cred, nil
}

// chainMap is what the command reads of the services map the host saves
// in its data folder: the cluster's address and the reward treasury.
type chainMap struct {
	// RPC is the simulated cluster's JSON-RPC URL.
	RPC string
	// Treasury is the test environment's reward treasury.
	Treasury string
}

// readChainMap reads the simulated cluster from DATA/services.json.
func readChainMap(data string) (chainMap, error) {
	path := filepath.Join(data, "services.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return chainMap{}, fmt.Errorf("read the host's services map (start the host first): %w", err)
	}
	var m struct {
		Simulators []struct {
			Name  string `json:"name"`
			URL   string `json:"url"`
			Chain *struct {
				Rewards *struct {
					Treasury string `json:"treasury"`
				} `json:"rewards"`
			} `json:"chain"`
		} `json:"simulators"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return chainMap{}, fmt.Errorf("read %s: %w", path, err)
	}
	for _, s := range m.Simulators {
		if s.Name != "solana" {
			continue
		}
		if s.Chain == nil || s.Chain.Rewards == nil {
			return chainMap{}, fmt.Errorf("%s: the host's cluster has no reward treasury (restart the host with this version)", path)
		}
		return chainMap{RPC: s.URL, Treasury: s.Chain.Rewards.Treasury}, nil
	}
	return chainMap{}, fmt.Errorf("%s: the host runs no Solana cluster (it was started with -chain-sim=false)", path)
}

// auth is how one request authenticates (democlient.Auth).
type auth = democlient.Auth

// client calls the platform's API in test mode.
type client struct{ *democlient.Client }

// linkWallet verifies key's wallet for the session's user: a link_wallet
// challenge whose message it signs (a wallet linked already keeps its
// link).
func (c *client) linkWallet(ctx context.Context, session auth, key ed25519.PrivateKey) error {
	_, link, err := c.LinkWallet(ctx, session, key)
	if err != nil {
		return err
	}
	wallet := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()
	fmt.Printf("Wallet %s verified (link %s, since %s).\n", wallet, link.LinkID, link.LinkedAt.Format(time.RFC3339))
	return nil
}
