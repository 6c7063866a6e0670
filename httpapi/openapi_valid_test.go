package httpapi_test

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/pricewatch/pricewatch/httpapi"
)

// TestOpenAPI_IsValidDocument checks the served description against the
// OpenAPI 3.1 JSON Schema (libopenapi-validator's ValidateDocument, the
// check openapi-spec-validator makes) and builds its model, resolving every
// $ref. Before the fix it failed on the unquoted commas of flow-mapping
// descriptions, which YAML reads as extra keys ("as offers name it",
// "vLLM tensor-parallel size)", "for the profile's note", "with the
// reason"): parameters and responses admit no such property.
func TestOpenAPI_IsValidDocument(t *testing.T) {
	doc, err := libopenapi.NewDocument(httpapi.OpenAPI)
	if err != nil {
		t.Fatalf("parse openapi.yaml: %v", err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi version %q", v)
	}
	if _, err := doc.BuildV3Model(); err != nil {
		t.Fatalf("build the model of openapi.yaml: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	ok, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("openapi.yaml line %d: %s: %s", e.SpecLine, e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			t.Errorf("  at %s (line %d): %s", se.FieldPath, se.Line, se.Reason)
		}
	}
	if !ok && len(verrs) == 0 {
		t.Error("openapi.yaml is not valid, and the validator gave no reason")
	}
	// Schema objects admit any key in 3.1, so a description cut at a comma
	// inside one would pass the schema check: no key may have a null value.
	var root yaml.Node
	if err := yaml.Unmarshal(httpapi.OpenAPI, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if v := n.Content[i+1]; v.Tag == "!!null" {
					t.Errorf("openapi.yaml line %d: key %q has no value (an unquoted comma in a flow mapping?)", n.Content[i].Line, n.Content[i].Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
}
