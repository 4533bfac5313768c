// Package apperr is the shape of a business error the API shows a client:
// a kind (which api/httperr turns into the HTTP status), a stable code and a
// message.
package apperr

// Kind classifies an error for the client.
type Kind int

// Kinds of business error.
const (
	Invalid Kind = iota + 1
	Unauthorized
	Forbidden
	NotFound
	Conflict
	TooMany
	Unavailable
	// Unprocessable: well formed, but it contradicts what the server already
	// holds (an Idempotency-Key reused for another request).
	Unprocessable
)

// Error is a business error with a code the client can act on.
type Error struct {
	Kind    Kind
	Code    string
	Message string
}

// New returns a business error.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }
