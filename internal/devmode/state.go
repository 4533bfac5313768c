package devmode

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// state is what a dev data directory remembers between runs besides the
// ledger: the secrets, so a restart keeps every printed token working.
type state struct {
	AdminToken string  `json:"admin_token"`
	PaySecret  string  `json:"pay_secret"`
	Seeded     *Seeded `json:"seeded,omitempty"`
}

func statePath(dir string) string { return filepath.Join(dir, "dev.json") }

// loadState reads the directory's state, creating fresh secrets on first use.
func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(statePath(dir))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &state{AdminToken: "dev-admin-" + randHex(12), PaySecret: "dev-pay-" + randHex(12)}, nil
	case err != nil:
		return nil, fmt.Errorf("read dev state: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("read dev state %s: %w", statePath(dir), err)
	}
	return &st, nil
}

func (st *state) save(dir string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	// Written whole to a temporary file and renamed: a crash leaves the old
	// state or the new one, never half of one.
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write dev state: %w", err)
	}
	return os.Rename(tmp, statePath(dir))
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
