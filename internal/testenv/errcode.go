package testenv

import (
	"errors"
	"testing"

	"orderflow/internal/domain/apperr"
)

// ErrCode is the code of the business error (*apperr.Error) in err's
// chain: "" for nil, "?" for an error that carries none.
func ErrCode(err error) string {
	var ae *apperr.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ae):
		return ae.Code
	}
	return "?"
}

// InvalidCode is the code of err, which must be a refusal of the client's
// input (an apperr.Invalid business error, a 400): "" for nil. Any other
// error fails the test.
func InvalidCode(t testing.TB, err error) string {
	t.Helper()
	var ae *apperr.Error
	switch {
	case err == nil:
		return ""
	case !errors.As(err, &ae) || ae.Kind != apperr.Invalid:
		t.Fatalf("%v is not a refusal of the input (an apperr.Invalid business error)", err)
	}
	return ae.Code
}
