// Command apilint lints the API's OpenAPI document (api/openapi/openapi.yaml,
// as embedded in the API) with contract.Lint: valid OpenAPI 3.1, the house
// rules, and every route of api/handler/router.go documented. `make lint`
// runs it from the repository root; it prints one line per problem and
// exits 1 when there is any.
package main

import (
	"flag"
	"fmt"
	"os"

	"orderflow/api/openapi"
	"orderflow/internal/testenv/contract"
)

func main() {
	router := flag.String("router", "api/handler/router.go", "the Go file that registers the API's routes")
	flag.Parse()
	src, err := os.ReadFile(*router)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apilint:", err)
		os.Exit(2)
	}
	problems := contract.Lint(openapi.Document, src)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "api/openapi/openapi.yaml:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Println("apilint: api/openapi/openapi.yaml is valid OpenAPI 3.1 and documents every route")
}
