package apperr

import (
	"errors"
	"fmt"
)

// ErrFinal marks an error retrying cannot help: the task's outcome is
// recorded (the order failed, the refund handed to an operator) or can
// never change. The domain says so with Final; the worker's route table
// (queue/worker) is the one place that turns it into asynq's "skip retry",
// so no domain package needs to know asynq.
var ErrFinal = errors.New("retrying cannot help")

// Final wraps err as one retrying cannot help.
func Final(err error) error { return fmt.Errorf("%w: %w", err, ErrFinal) }

// IsFinal reports whether retrying err cannot help: it was marked Final, or
// it is a business error of kind NotFound (the task's object does not
// exist, and a retry will not create it).
func IsFinal(err error) bool {
	var e *Error
	return errors.Is(err, ErrFinal) || (errors.As(err, &e) && e.Kind == NotFound)
}
