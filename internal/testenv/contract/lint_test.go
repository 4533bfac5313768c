package contract_test

import (
	"os"
	"strings"
	"testing"

	"orderflow/api/openapi"
	"orderflow/internal/testenv/contract"
)

// TestDocumentLints: the document as shipped passes the lint `make lint`
// runs, and each rule catches the mistake it is there for.
func TestDocumentLints(t *testing.T) {
	router, err := os.ReadFile("../../../api/handler/router.go")
	if err != nil {
		t.Fatal(err)
	}
	if problems := contract.Lint(openapi.Document, router); len(problems) > 0 {
		t.Fatalf("the document fails its lint:\n%s", strings.Join(problems, "\n"))
	}
	doc := string(openapi.Document)
	edit := func(old, repl string) []byte {
		t.Helper()
		if !strings.Contains(doc, old) {
			t.Fatalf("the document no longer holds %q: update this test", old)
		}
		return []byte(strings.Replace(doc, old, repl, 1))
	}
	cases := []struct {
		name         string
		spec, router []byte
		want         string
	}{
		{"a route missing from the document", openapi.Document,
			append(router, []byte(`mux.Handle("DELETE /api/v1/admin/orders/{order_no}", nil)`)...), "routed in the API but not in the document"},
		{"OpenAPI 3.0", edit("openapi: 3.1.0", "openapi: 3.0.3"), router, "3.1"},
		{"not OpenAPI at all", edit("    get:\n      tags: [admin]\n      operationId: getStats", "    got:\n      tags: [admin]\n      operationId: getStats"), router, "not valid OpenAPI"},
		{"an admin endpoint without the admin token", edit("      operationId: getStats\n      summary: Operator statistics\n      security:\n        - adminToken: []",
			"      operationId: getStats\n      summary: Operator statistics\n      security:\n        - buyerToken: []"), router, "must ask for adminToken alone"},
		{"an error answer of another shape", edit(`        "429":
          $ref: "#/components/responses/TooManyPending"`, `        "429":
          description: slow down
          content:
            application/json:
              schema:
                type: object`), router, "answer 429 is not the Error schema"},
		{"an operation without an id", edit("      operationId: getStats\n", ""), router, "wants an operationId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			problems := strings.Join(contract.Lint(tc.spec, tc.router), "\n")
			if !strings.Contains(problems, tc.want) {
				t.Errorf("lint said %q, want a line with %q", problems, tc.want)
			}
		})
	}
}

// TestEmbeddedDocumentIsTheFile: what the API embeds (and serves) is the file.
func TestEmbeddedDocumentIsTheFile(t *testing.T) {
	b, err := os.ReadFile("../../../api/openapi/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(openapi.Document) {
		t.Fatal("the embedded document differs from api/openapi/openapi.yaml")
	}
}
