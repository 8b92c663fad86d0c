// Command pgcheck exits 0 when the PostgreSQL server at the URL given as its
// argument answers a ping within ten seconds; CI runs it before the
// PostgreSQL pass so an unreachable server fails the run instead of
// skipping it.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pgcheck URL")
		os.Exit(2)
	}
	db, err := sql.Open("pgx", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgcheck:", err)
		os.Exit(1)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "pgcheck:", err)
		os.Exit(1)
	}
}
