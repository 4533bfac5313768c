package model

import (
	"errors"
	"fmt"
)

// Found turns a ledger lookup's answer into a use case's: ErrNotFound
// becomes notFound (the aggregate's own error, which the API shows the
// client), any other error is wrapped with the operation, and a row found
// is returned as it is.
func Found[T any](v *T, err error, notFound error, op string, args ...any) (*T, error) {
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, notFound
	case err != nil:
		return nil, fmt.Errorf(op+": %w", append(args, err)...)
	}
	return v, nil
}
