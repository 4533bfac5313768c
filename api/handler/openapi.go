package handler

import (
	"net/http"

	"orderflow/api/openapi"
)

// serveOpenAPI answers the API's own OpenAPI document. No token: the
// contract is public, and a front end's code generator fetches it.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", openapi.MediaType)
	_, _ = w.Write(openapi.Document)
}
