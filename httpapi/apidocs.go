package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The API reference (/api) is openapi.yaml rendered on the server: every
// path and method with its summary, parameters (with their descriptions)
// and responses (the schema or response each names). /openapi.yaml stays
// the machine-readable description.

type apiDocs struct {
	Title, Summary, Description string
	Ops                         []apiOp
	Schemas                     []apiSchema
}

type apiOp struct {
	Method, Path, Summary, Description, Anchor string
	Token                                      bool
	Params                                     []apiParam
	Body                                       string
	Responses                                  []apiResponse
}

type apiParam struct {
	Name, In, Type, Description string
	Required                    bool
}

type apiResponse struct{ Code, Description, Schema string }

type apiSchema struct{ Name, Description, Properties string }

// The YAML shapes read from openapi.yaml, only what the page shows.
type oaParam struct {
	Ref         string   `yaml:"$ref"`
	Name        string   `yaml:"name"`
	In          string   `yaml:"in"`
	Required    bool     `yaml:"required"`
	Description string   `yaml:"description"`
	Schema      oaSchema `yaml:"schema"`
}

type oaSchema struct {
	Ref         string              `yaml:"$ref"`
	Type        string              `yaml:"type"`
	Format      string              `yaml:"format"`
	Enum        []string            `yaml:"enum"`
	Description string              `yaml:"description"`
	Properties  map[string]oaSchema `yaml:"properties"`
	Minimum     *float64            `yaml:"minimum"`
	Maximum     *float64            `yaml:"maximum"`
}

type oaMedia struct {
	Schema oaSchema `yaml:"schema"`
}

type oaResponse struct {
	Ref         string             `yaml:"$ref"`
	Description string             `yaml:"description"`
	Content     map[string]oaMedia `yaml:"content"`
}

type oaOp struct {
	Summary     string                `yaml:"summary"`
	Description string                `yaml:"description"`
	Parameters  []oaParam             `yaml:"parameters"`
	Security    []map[string][]string `yaml:"security"`
	RequestBody *struct {
		Content map[string]oaMedia `yaml:"content"`
	} `yaml:"requestBody"`
	Responses yaml.Node `yaml:"responses"`
}

type oaDoc struct {
	Info struct {
		Title       string `yaml:"title"`
		Summary     string `yaml:"summary"`
		Description string `yaml:"description"`
	} `yaml:"info"`
	Components struct {
		Parameters map[string]oaParam    `yaml:"parameters"`
		Schemas    map[string]oaSchema   `yaml:"schemas"`
		Responses  map[string]oaResponse `yaml:"responses"`
	} `yaml:"components"`
	Paths yaml.Node `yaml:"paths"`
}

var loadAPIDocs = sync.OnceValues(func() (*apiDocs, error) { return buildAPIDocs(OpenAPI) })

// buildAPIDocs reads an OpenAPI document in its own order of paths.
func buildAPIDocs(src []byte) (*apiDocs, error) {
	var doc oaDoc
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	d := &apiDocs{Title: doc.Info.Title, Summary: doc.Info.Summary, Description: doc.Info.Description}
	for i := 0; i+1 < len(doc.Paths.Content); i += 2 {
		path := doc.Paths.Content[i].Value
		item := doc.Paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := item.Content[j].Value
			if !slices.Contains([]string{"get", "put", "post", "delete", "patch"}, method) {
				continue
			}
			var op oaOp
			if err := item.Content[j+1].Decode(&op); err != nil {
				return nil, fmt.Errorf("openapi.yaml: %s %s: %w", method, path, err)
			}
			d.Ops = append(d.Ops, doc.op(strings.ToUpper(method), path, op))
		}
	}
	names := make([]string, 0, len(doc.Components.Schemas))
	for n := range doc.Components.Schemas {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		s := doc.Components.Schemas[n]
		props := make([]string, 0, len(s.Properties))
		for p := range s.Properties {
			props = append(props, p)
		}
		slices.Sort(props)
		d.Schemas = append(d.Schemas, apiSchema{Name: n, Description: s.Description, Properties: strings.Join(props, ", ")})
	}
	return d, nil
}

func (doc *oaDoc) op(method, path string, op oaOp) apiOp {
	o := apiOp{Method: method, Path: path, Summary: op.Summary, Description: op.Description, Token: len(op.Security) > 0,
		Anchor: strings.ToLower(method) + strings.NewReplacer("/", "-", "{", "", "}", "", ".", "-").Replace(path)}
	for _, p := range op.Parameters {
		if p.Ref != "" {
			p = doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
		}
		o.Params = append(o.Params, apiParam{Name: p.Name, In: p.In, Required: p.Required, Type: schemaText(p.Schema), Description: p.Description})
	}
	if op.RequestBody != nil {
		for ct, m := range op.RequestBody.Content {
			o.Body = ct + ", " + schemaText(m.Schema)
		}
	}
	for i := 0; i+1 < len(op.Responses.Content); i += 2 {
		var r oaResponse
		if err := op.Responses.Content[i+1].Decode(&r); err != nil {
			continue
		}
		if r.Ref != "" {
			r = doc.Components.Responses[strings.TrimPrefix(r.Ref, "#/components/responses/")]
		}
		var schemas []string
		for ct, m := range r.Content {
			schemas = append(schemas, ct+" "+schemaText(m.Schema))
		}
		slices.Sort(schemas)
		o.Responses = append(o.Responses, apiResponse{Code: op.Responses.Content[i].Value, Description: r.Description, Schema: strings.Join(schemas, "; ")})
	}
	return o
}

// schemaText is a schema in a few words: a named one by its name, else
// its type, format, range and choices.
func schemaText(s oaSchema) string {
	if s.Ref != "" {
		return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
	}
	t := s.Type
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		t += fmt.Sprintf(" %g..%g", *s.Minimum, *s.Maximum)
	case s.Minimum != nil:
		t += fmt.Sprintf(" ≥ %g", *s.Minimum)
	}
	if len(s.Enum) > 0 {
		t += ": " + strings.Join(s.Enum, " | ")
	}
	return t
}

type apiPage struct {
	page
	Docs *apiDocs
}

func (s *Server) apiReference(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkParams(q, "workload", "currency", "mode", "max_gpus"); err != nil {
		return renderError(w, "api", q, err)
	}
	d, err := loadAPIDocs()
	if err != nil {
		return err
	}
	return render(w, "api", http.StatusOK, apiPage{page: page{Title: "API reference", Nav: "api", Query: q, Data: s.dataNote()}, Docs: d})
}
