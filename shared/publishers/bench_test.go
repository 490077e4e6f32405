package publishers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

// benchScale is the size of the generated catalog the benchmarks page through beside
// the demo data: its publisher 1 publishes about a tenth of it.
const (
	benchScale  = 10000
	benchClient = 3
)

// publicationCase is one GET /publisher/publications/{id} request of the benchmarks.
type publicationCase struct {
	name   string
	event  []byte
	filter catalog.PublicationFilter
}

// publicationCases returns the demo event as it is in events/, and the same request
// (limit 20) for the large publisher of a generated catalog.
func publicationCases(b *testing.B, db *testenv.DB) []publicationCase {
	b.Helper()
	ctx := context.Background()
	if err := demo.Generate(ctx, db.DB, benchClient, benchScale); err != nil {
		b.Fatal(err)
	}
	big, err := db.PublisherBySlug(ctx, demo.GeneratedPublisherSlug(benchClient, 1))
	if err != nil {
		b.Fatal(err)
	}

	ev := testenv.Event(b, "publishers/get-publications.json")
	demoEvent, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	id := fmt.Sprint(big.ID)
	q := url.Values{"client": {fmt.Sprint(benchClient)}, "limit": {"20"}, "offset": {"0"}, "order": {"name-asc"}, "user_lang": {"English"}}
	ev.RawPath = "/publisher/publications/" + id
	ev.RequestContext.HTTP.Path = ev.RawPath
	ev.PathParameters = map[string]string{"id": id}
	ev.RawQueryString = q.Encode()
	ev.QueryStringParameters = map[string]string{}
	for k := range q {
		ev.QueryStringParameters[k] = q.Get(k)
	}
	bigEvent, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	return []publicationCase{
		{"demo", demoEvent, catalog.PublicationFilter{Publisher: 2, Client: 1, Order: "name-asc", Language: "English", Limit: 9}},
		{fmt.Sprintf("generated-%d", benchScale), bigEvent,
			catalog.PublicationFilter{Publisher: big.ID, Client: benchClient, Order: "name-asc", Language: "English", Limit: 20}},
	}
}

// BenchmarkPublicationsLambda serves GET /publisher/publications/{id} as under Lambda:
// the event's JSON in, through the API Gateway v2 adapter and the whole middleware,
// the response out.
func BenchmarkPublicationsLambda(b *testing.B) {
	h, db, _ := setup(b)
	ctx := context.Background()
	for _, c := range publicationCases(b, db) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := lambdahttp.Invoke(ctx, h, c.event)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("invoke: %d %v", resp.StatusCode, err)
				}
			}
		})
	}
}

// BenchmarkPublicationsBaseline is the same work without adapter or middleware: the
// store call and the JSON encoding of the page.
func BenchmarkPublicationsBaseline(b *testing.B) {
	_, db, _ := setup(b)
	ctx := context.Background()
	for _, c := range publicationCases(b, db) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := db.PublisherPublications(ctx, c.filter)
				if err != nil {
					b.Fatal(err)
				}
				var p page
				p.Publications, p.MaxExact = res.Publications, res.Exact
				p.Max, p.From, p.To = httpapi.Page{Limit: c.filter.Limit}.Envelope(res.Total, len(res.Publications))
				if _, err := json.Marshal(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
