package testenv

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/api/openapi"
	"orderflow/internal/testenv/contract"
)

// apiContract is the API's OpenAPI document, loaded once per test binary.
var apiContract = sync.OnceValue(func() *contract.Validator {
	v, err := contract.New(openapi.Document)
	if err != nil {
		// The document's own test (internal/testenv/contract) says why.
		panic("testenv: " + err.Error())
	}
	return v
})

// violations holds every contract violation not yet pinned on a test: the
// stack whose API saw it reports it when its test ends, and Main reports
// what is left (calls to child processes) when the package's tests end.
var violations struct {
	sync.Mutex
	open []*contract.Violation
}

func report(v *contract.Violation) {
	violations.Lock()
	defer violations.Unlock()
	violations.open = append(violations.open, v)
}

// surfaced drops a violation that already failed the test that made the call.
func surfaced(err error) {
	var v *contract.Violation
	if !errors.As(err, &v) {
		return
	}
	violations.Lock()
	defer violations.Unlock()
	violations.open = slices.DeleteFunc(violations.open, func(x *contract.Violation) bool { return x == v })
}

// takeViolations removes and returns the open violations of requests sent
// to host ("" takes them all).
func takeViolations(host string) []*contract.Violation {
	violations.Lock()
	defer violations.Unlock()
	var taken []*contract.Violation
	violations.open = slices.DeleteFunc(violations.open, func(v *contract.Violation) bool {
		if host == "" || v.Host == host {
			taken = append(taken, v)
			return true
		}
		return false
	})
	return taken
}

// failOnViolations fails t, when it ends, with the violations of the
// requests sent to host that no call has reported yet (those a goroutine
// saw as an error and dropped).
func failOnViolations(t testing.TB, host string) {
	t.Cleanup(func() {
		for _, v := range takeViolations(host) {
			t.Errorf("%v", v)
		}
	})
}

// leftViolations is Main's last word: violations no test reported.
func leftViolations() error {
	left := takeViolations("")
	if len(left) == 0 {
		return nil
	}
	msgs := make([]string, len(left))
	for i, v := range left {
		msgs[i] = v.Error()
	}
	return fmt.Errorf("%d exchange(s) broke the OpenAPI document (api/openapi/openapi.yaml):\n%s", len(left), strings.Join(msgs, "\n"))
}

// ContractTransport wraps base (http.DefaultTransport when nil) so every
// exchange it carries is checked against the API's OpenAPI document: a
// mismatch is the call's error and fails the test (see contract.Validator
// for the rules). Every test client of the API and the worker uses it.
func ContractTransport(base http.RoundTripper) http.RoundTripper {
	return &contract.Transport{Base: base, Validator: apiContract(), Report: report}
}

// HTTPClient is an http.Client whose exchanges are checked against the API's
// OpenAPI document.
func HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: ContractTransport(nil)}
}
