// Package openapi embeds the OpenAPI 3.1 document of the whole API. Tests validate
// every response they receive against it, and check that the code, template.yaml and
// this document name the same set of routes.
package openapi

import _ "embed"

// Document is the OpenAPI document, as YAML.
//
//go:embed openapi.yaml
var Document []byte
