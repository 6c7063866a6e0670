package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// OpenAPI is the OpenAPI 3.1 description of every route, served at
// /openapi.yaml and checked against the route table by the tests.
//
//go:embed openapi.yaml
var OpenAPI []byte

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Content-Length", strconv.Itoa(len(OpenAPI)))
	w.Write(OpenAPI)
	return nil
}
