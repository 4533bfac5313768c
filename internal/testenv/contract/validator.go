// Package contract holds the HTTP API to its OpenAPI document in the tests:
// a Validator checks one exchange (request and answer) against the
// document, and a Transport checks every exchange an http.Client carries,
// so a handler that drifts from the document fails the test that called it.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Exempt are the path prefixes outside the contract: pages for people
// (asynqmon's dashboard and its own API, the operator console) and Go's
// profiler. They are not an integration surface, and their shapes belong to
// asynqmon and net/http/pprof, not to us.
var Exempt = []string{"/monitoring", "/console", "/debug/pprof"}

// Validator checks exchanges against one OpenAPI document.
type Validator struct {
	router routers.Router
}

// New loads and validates an OpenAPI document.
func New(spec []byte) (*Validator, error) {
	doc, err := load(spec)
	if err != nil {
		return nil, err
	}
	// The tests' servers listen on random ports: match any host.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: route the document: %w", err)
	}
	return &Validator{router: router}, nil
}

func load(spec []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("contract: load the document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("contract: the document is not valid OpenAPI: %w", err)
	}
	return doc, nil
}

// Violation is an exchange the document does not allow.
type Violation struct {
	Host, Method, Path string
	Status             int
	Reason             string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("contract: %s %s answered %d: %s", v.Method, v.Path, v.Status, v.Reason)
}

// IsExempt reports whether a path is outside the contract.
func IsExempt(path string) bool {
	for _, p := range Exempt {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// Check validates one exchange, its bodies given raw. The rules:
//   - the answer must be one the document lists for the operation, with that
//     status, content type and body schema;
//   - a request the document does not allow (a missing token or signature,
//     a body or parameter outside its schema) must be refused with a 4xx: a
//     handler that accepts it is looser than its contract;
//   - a path and method the document does not name must be answered 404 or
//     405: anything else is an endpoint missing from the document.
//
// A request the document allows may still be refused (unknown order, out of
// stock…): the document's schemas are the shape, not every business rule.
func (v *Validator) Check(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) error {
	if IsExempt(req.URL.Path) || req.Method == http.MethodHead {
		return nil
	}
	fail := func(format string, args ...any) error {
		return &Violation{Host: req.URL.Host, Method: req.Method, Path: req.URL.RequestURI(), Status: status, Reason: fmt.Sprintf(format, args...)}
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil
		}
		return fail("not in the OpenAPI document (%v)", err)
	}
	ctx := context.Background()
	r := req.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	reqOpts := &openapi3filter.Options{AuthenticationFunc: authenticate, SkipSettingDefaults: true, MultiError: true}
	reqOpts.WithCustomSchemaErrorFunc(schemaError)
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: reqOpts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && (status < 400 || status >= 500) {
		return fail("the request breaks the document, so it must be refused with a 4xx: %v", err)
	}
	respOpts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	respOpts.WithCustomSchemaErrorFunc(schemaError)
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(respBody)), Options: respOpts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fail("the answer breaks the document: %v (body %s)", err, clip(respBody))
	}
	return nil
}

// authenticate checks that a request carries what a security scheme names:
// a bearer token, or the signature header. Whether the token is right is the
// server's business (a 401 the document lists).
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, r := in.SecurityScheme, in.RequestValidationInput.Request
	switch s.Type {
	case "http":
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || strings.TrimSpace(tok) == "" {
			return errors.New("no bearer token")
		}
	case "apiKey":
		if r.Header.Get(s.Name) == "" {
			return fmt.Errorf("no %s header", s.Name)
		}
	default:
		return fmt.Errorf("security scheme type %q is not checked by the tests", s.Type)
	}
	return nil
}

// schemaError is one line per mismatch — the field and what is wrong with
// it — instead of the library's dump of the whole schema.
func schemaError(err *openapi3.SchemaError) string {
	reason := err.Reason
	if cause := err.Unwrap(); cause != nil && (reason == "" || strings.HasPrefix(reason, "jsonschema validation failed")) {
		// The JSON Schema 2020-12 validator's own error says which keyword failed.
		reason = strings.Join(strings.Fields(cause.Error()), " ")
	}
	return fmt.Sprintf("field /%s: %s (got %s)", strings.Join(err.JSONPointer(), "/"), reason, clip(mustJSON(err.Value)))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprint(v))
	}
	return b
}

func clip(b []byte) string {
	const max = 600
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
