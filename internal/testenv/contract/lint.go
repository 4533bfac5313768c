package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// providerPaths speak their provider's protocol (Alipay answers text,
// WeChat Pay {"code":"FAIL"}), so their errors need not be ours.
var providerPaths = []string{"/api/v1/payments/alipay/", "/api/v1/payments/wechat/"}

// routePattern is a method-qualified net/http ServeMux pattern in Go source.
var routePattern = regexp.MustCompile(`"(GET|POST|PUT|PATCH|DELETE) (/[^" ]*)"`)

// Lint checks the document beyond what OpenAPI itself requires, and that it
// names every route of routerSource (the Go file that registers the API's
// routes). It returns one line per problem; none means the document passes.
//
// The house rules: OpenAPI 3.1; every operation has an operationId, a
// summary and a tag; lists a 2xx answer; answers its JSON errors with the
// Error schema (the providers' protocols and /readyz's report aside); and, when it asks for a
// token or a signature, lists the 401 that refuses it. Every admin endpoint
// asks for the admin token, every other /api/v1 endpoint for a token or a
// signature (Alipay's signature travels in its form body).
func Lint(spec, routerSource []byte) []string {
	doc, err := load(spec)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		bad("openapi is %q, want 3.1.x", doc.OpenAPI)
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			lintOperation(doc, path, method, op, bad)
		}
	}
	for _, m := range routePattern.FindAllSubmatch(routerSource, -1) {
		method, path := string(m[1]), string(m[2])
		if IsExempt(path) {
			continue
		}
		if item := doc.Paths.Find(path); item == nil || item.GetOperation(method) == nil {
			bad("%s %s: routed in the API but not in the document", method, path)
		}
	}
	return problems
}

func lintOperation(doc *openapi3.T, path, method string, op *openapi3.Operation, bad func(string, ...any)) {
	name := method + " " + path
	if op.OperationID == "" || op.Summary == "" || len(op.Tags) == 0 {
		bad("%s: wants an operationId, a summary and a tag", name)
	}
	var ok bool
	for code, ref := range op.Responses.Map() {
		ok = ok || strings.HasPrefix(code, "2")
		isError := strings.HasPrefix(code, "4") || strings.HasPrefix(code, "5")
		if !isError || !strings.HasPrefix(path, "/api/") || hasPrefix(path, providerPaths) {
			continue
		}
		if mt := ref.Value.Content.Get("application/json"); mt != nil && (mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error") {
			bad("%s: answer %s is not the Error schema", name, code)
		}
	}
	if !ok {
		bad("%s: lists no 2xx answer", name)
	}
	security := doc.Security
	if op.Security != nil {
		security = *op.Security
	}
	schemes := map[string]bool{}
	for _, req := range security {
		for s := range req {
			schemes[s] = true
		}
	}
	switch {
	case strings.HasPrefix(path, "/api/v1/admin/"):
		if len(security) != 1 || len(schemes) != 1 || !schemes["adminToken"] {
			bad("%s: an admin endpoint must ask for adminToken alone", name)
		}
	case strings.HasPrefix(path, "/api/v1/") && !strings.HasPrefix(path, "/api/v1/payments/alipay/"):
		if len(schemes) == 0 {
			bad("%s: asks for no token or signature", name)
		}
	}
	if len(schemes) > 0 && op.Responses.Status(401) == nil && op.Responses.Value("4XX") == nil && op.Responses.Status(400) == nil {
		bad("%s: asks for credentials but lists no 401 (or 400) refusing them", name)
	}
}

func hasPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}
