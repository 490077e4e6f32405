// Package apidocs serves the API reference of the local server (make run) at /docs:
// the OpenAPI document (shared/openapi) in Swagger UI, whose "Try it out" sends its
// requests to that server with the browser's cookies. Swagger UI comes from
// swagger-ui-dist as this folder's package-lock.json pins it, installed by npm ci into
// node_modules (Install) and served from there: no CDN. Only the local server links
// this package; the Lambda functions do not serve /docs.
package apidocs

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/shared/openapi"
)

// Path is where the page is: Path itself (Swagger UI), Path+"/openapi.yaml" (the
// document) and Path+"/<file>" (Swagger UI's files). The page sits at /docs rather
// than /docs/ so that a cookie its script sets (Authorize) has the path /.
const Path = "/docs"

// entry is the file of swagger-ui-dist whose presence says the install completed.
const entry = "swagger-ui-dist/swagger-ui-bundle.js"

// assets are the files of swagger-ui-dist the page loads.
var assets = map[string]string{
	"swagger-ui.css":       "text/css; charset=utf-8",
	"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
	"favicon-32x32.png":    "image/png",
	"favicon-16x16.png":    "image/png",
}

//go:embed index.html
var page []byte

// Install installs the pinned swagger-ui-dist into infra/local/apidocs/node_modules when it
// is missing or older than the lockfile (npm ci, logged on log), and returns the
// folder of its files, for Handler.
func Install(ctx context.Context, log io.Writer) (string, error) {
	root, err := localservices.RepoRoot()
	if err != nil {
		return "", err
	}
	pkg := filepath.Join(root, "infra", "local", "apidocs")
	if err := localservices.NPMInstall(ctx, log, pkg, entry); err != nil {
		return "", fmt.Errorf("install Swagger UI for %s: %w", Path, err)
	}
	return filepath.Join(pkg, "node_modules", filepath.Dir(entry)), nil
}

// Handler serves the page, the document and Swagger UI's files from dist (the folder
// Install returns) under Path.
func Handler(dist string) (http.Handler, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(openapi.Document, &doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("openapi document: not a YAML mapping")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(page)
	})
	mux.Handle("GET "+Path+"/{$}", http.RedirectHandler(Path, http.StatusMovedPermanently))
	mux.HandleFunc("GET "+Path+"/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		body, err := withServer(doc.Content[0], origin(r))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	})
	mux.HandleFunc("GET "+Path+"/{file}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		ctype, ok := assets[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ctype)
		http.ServeFile(w, r, filepath.Join(dist, name))
	})
	return mux, nil
}

// origin is the address the browser reached this server at, so that "Try it out"
// stays on the page's origin (its cookies, no CORS) whatever the port or host name.
func origin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// withServer returns the document (root, its top-level mapping) as YAML with the
// servers list replaced by this one server. root is shared between requests and
// left unchanged: the copy holds new nodes for servers only.
func withServer(root *yaml.Node, url string) ([]byte, error) {
	servers := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{
		Kind: yaml.MappingNode,
		Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "url"}, {Kind: yaml.ScalarNode, Value: url},
			{Kind: yaml.ScalarNode, Value: "description"}, {Kind: yaml.ScalarNode, Value: "this local server (make run)"},
		},
	}}}
	out := *root
	out.Content = make([]*yaml.Node, 0, len(root.Content)+2)
	replaced := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if key.Value == "servers" {
			value, replaced = servers, true
		}
		out.Content = append(out.Content, key, value)
	}
	if !replaced {
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "servers"}, servers)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := errors.Join(enc.Encode(&out), enc.Close()); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return buf.Bytes(), nil
}
