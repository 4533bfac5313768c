package httpapi

import (
	"io"
	"testing"
	"time"

	"orderflow/api/openapi"
	"orderflow/internal/testenv"
)

// TestOpenAPIDocumentServed: GET /api/openapi.yaml answers the embedded
// document without a token, as YAML (the call itself goes through the
// contract check like every other).
func TestOpenAPIDocumentServed(t *testing.T) {
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	resp, err := testenv.HTTPClient(10 * time.Second).Get(s.APIURL + "/api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, err %v; want 200", resp.StatusCode, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != openapi.MediaType {
		t.Errorf("Content-Type %q, want %q", ct, openapi.MediaType)
	}
	if string(body) != string(openapi.Document) {
		t.Errorf("served %d bytes, want the %d-byte embedded document", len(body), len(openapi.Document))
	}
}
