// Package openapi holds the OpenAPI 3.1 document of the HTTP API: the
// contract a shop's front end integrates against, served at
// GET /api/openapi.yaml and held true by the tests, which validate every
// request they send and every answer they get against it
// (internal/testenv/contract).
package openapi

import _ "embed" // the document ships inside the binary

// Document is openapi.yaml, byte for byte.
//
//go:embed openapi.yaml
var Document []byte

// MediaType is the Content-Type the document is served with.
const MediaType = "application/yaml"
