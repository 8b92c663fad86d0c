package platform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/store/sqlite"
)

// Example embeds the platform on SQLite, creates a workspace with a test key
// and calls the API with it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "platform-example")
	defer os.RemoveAll(dir)

	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "platform.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	mailer, err := filemail.New(filepath.Join(dir, "mail"), "no-reply@acme.example", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := platform.New(ctx, platform.Config{Store: db, SecretKey: []byte("example-master-secret-of-32-bytes!!"),
		BlobDir: filepath.Join(dir, "blobs"), Mailer: mailer})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "Acme", WorkspaceName: "Acme Studio",
		OwnerEmail: "owner@acme.example", OwnerName: "Owner"})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/auth/context", nil)
	req.Header.Set("Authorization", "Bearer "+boot.TestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Environment string   `json:"environment"`
			Roles       []string `json:"roles"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	fmt.Println(resp.StatusCode, out.Data.Environment, out.Data.Roles)
	// Output: 200 test [DEVELOPER OWNER]
}
