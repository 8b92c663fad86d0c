package ai

import (
	"context"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// Store is the port the registry, health and routing read and write
// through, bound to one unit of work (or the read pool for reads). Errors
// are *fault.Error: NOT_FOUND for a missing row, CONFLICT for a lost
// compare-and-set or a taken key. It is the seam between this package
// and SQL, not a stable API.
type Store interface {
	policy.Store
	outbox.Writer
	account.AuditWriter
	// AIModelList returns every model of env's registry, retired ones
	// included, in id order.
	AIModelList(ctx context.Context, env access.Environment) ([]RegistryModel, error)
	// AIModelGet reads model id of env's registry; NOT_FOUND when none.
	AIModelGet(ctx context.Context, env access.Environment, id string) (RegistryModel, error)
	// AIModelInsert stores a new model (Version 1); CONFLICT when env's
	// registry holds its id.
	AIModelInsert(ctx context.Context, m RegistryModel) error
	// AIModelUpdate writes m when the stored version is m.Version-1;
	// CONFLICT otherwise.
	AIModelUpdate(ctx context.Context, m RegistryModel) error
	// AIHealthList returns env's health records, in model id order.
	AIHealthList(ctx context.Context, env access.Environment) ([]Health, error)
	// AIHealthGet reads the health record of model id in env; NOT_FOUND
	// when the model was never observed.
	AIHealthGet(ctx context.Context, env access.Environment, id string) (Health, error)
	// AIHealthPut stores h: a new record when h.Version is 1 (CONFLICT when
	// one exists), else an update when the stored version is h.Version-1
	// (CONFLICT otherwise).
	AIHealthPut(ctx context.Context, h Health) error
}
