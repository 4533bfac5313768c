package handler

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"orderflow/internal/domain/apperr"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// writeError maps an error to a status and a {"error":{code,message}} body:
// a business error (even wrapped with its operation) keeps its kind's status
// and its code; anything else is a bare 500 that shows the client nothing
// of the cause and is logged instead.
func TestWriteError(t *testing.T) {
	type answer struct {
		Status  int
		Code    string
		Message string
		Logged  int
	}
	for _, tc := range []struct {
		name string
		err  error
		want answer
	}{
		{"invalid", apperr.New(apperr.Invalid, "invalid_quantity", "quantity must be 1..100"),
			answer{http.StatusBadRequest, "invalid_quantity", "quantity must be 1..100", 0}},
		{"not found, wrapped with its operation", fmt.Errorf("pay order O1: %w", apperr.New(apperr.NotFound, "order_not_found", "no such order")),
			answer{http.StatusNotFound, "order_not_found", "no such order", 0}},
		{"conflict", apperr.New(apperr.Conflict, "out_of_stock", "not enough stock"), answer{http.StatusConflict, "out_of_stock", "not enough stock", 0}},
		{"too many", apperr.New(apperr.TooMany, "too_many_pending", "pay one first"), answer{http.StatusTooManyRequests, "too_many_pending", "pay one first", 0}},
		{"unprocessable", apperr.New(apperr.Unprocessable, "idempotency_key_reused", "another request"),
			answer{http.StatusUnprocessableEntity, "idempotency_key_reused", "another request", 0}},
		{"unavailable", apperr.New(apperr.Unavailable, "unavailable", "try later"), answer{http.StatusServiceUnavailable, "unavailable", "try later", 0}},
		{"anything else", errors.New("dial tcp 127.0.0.1:3306: connection refused"),
			answer{http.StatusInternalServerError, "internal", "internal error; it has been logged", 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zap.ErrorLevel)
			rec := httptest.NewRecorder()
			writeError(rec, httptest.NewRequest(http.MethodPost, "/api/v1/orders", nil), zap.New(core), tc.err)
			var body errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body.String(), err)
			}
			got := answer{rec.Code, body.Error.Code, body.Error.Message, logs.Len()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
		})
	}
}

// A body field of the wrong JSON type is answered with that field's code
// (the same as a value out of bounds); any other bad body with invalid_json.
func TestDecodeJSON(t *testing.T) {
	var dst struct {
		ProductID int64  `json:"product_id"`
		Quantity  int    `json:"quantity"`
		Title     string `json:"title"`
		Other     int    `json:"other"`
	}
	for _, tc := range []struct {
		name, body, want string // want: the error code, "" for none
	}{
		{"good", `{"product_id":7,"quantity":2,"title":"t"}`, ""},
		{"string for a number", `{"product_id":"7"}`, "invalid_product"},
		{"fraction", `{"quantity":1.5}`, "invalid_quantity"},
		{"beyond int64", `{"product_id":9223372036854775808}`, "invalid_product"},
		{"number for a string", `{"title":5}`, "invalid_title"},
		{"a field without a code", `{"other":"x"}`, "invalid_json"},
		{"not JSON", `product_id=7`, "invalid_json"},
		{"truncated", `{"product_id":7`, "invalid_json"},
		{"an array", `[1,2]`, "invalid_json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if err := decodeJSON([]byte(tc.body), &dst); err != nil {
				var ae *apperr.Error
				if !errors.As(err, &ae) || ae.Kind != apperr.Invalid {
					t.Fatalf("decodeJSON error %v is not an Invalid business error (a 400)", err)
				}
				got = ae.Code
			}
			if got != tc.want {
				t.Errorf("decodeJSON(%s) code = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}
