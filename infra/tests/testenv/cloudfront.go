package testenv

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// CloudFront speaks CloudFront's CreateInvalidation (REST-XML) for one distribution,
// for the SDK's client pointed at it through its base endpoint
// (AWS_ENDPOINT_URL_CLOUDFRONT), and records the paths of each invalidation. An
// unknown distribution, or any request while Fail is set, is CloudFront's
// NoSuchDistribution.
type CloudFront struct {
	Dist string
	URL  string // the stand-in's base endpoint

	mu      sync.Mutex
	batches [][]string
	fail    bool
	calls   int
}

// NewCloudFront serves a CloudFront stand-in of distribution dist until the test ends.
func NewCloudFront(t testing.TB, dist string) *CloudFront {
	t.Helper()
	c := &CloudFront{Dist: dist}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Reset forgets the invalidations and calls so far and sets whether the next ones fail.
func (c *CloudFront) Reset(fail bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail, c.batches, c.calls = fail, nil, 0
}

// Invalidations are the paths of each invalidation created since the last Reset, and
// the number of CreateInvalidation requests, failed ones included.
func (c *CloudFront) Invalidations() (batches [][]string, calls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.batches...), c.calls
}

func (c *CloudFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.fail || r.Method != http.MethodPost || r.URL.Path != "/2020-05-31/distribution/"+c.Dist+"/invalidation" {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `<?xml version="1.0"?><ErrorResponse xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Error><Type>Sender</Type><Code>NoSuchDistribution</Code><Message>The specified distribution does not exist.</Message></Error><RequestId>r1</RequestId></ErrorResponse>`)
		return
	}
	var batch struct {
		CallerReference string   `xml:"CallerReference"`
		Quantity        int      `xml:"Paths>Quantity"`
		Paths           []string `xml:"Paths>Items>Path"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := xml.Unmarshal(body, &batch); err != nil || batch.CallerReference == "" || batch.Quantity != len(batch.Paths) {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.batches = append(c.batches, batch.Paths)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Location", "https://cloudfront.amazonaws.com/2020-05-31/distribution/"+c.Dist+"/invalidation/I1")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `<?xml version="1.0"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>I1</Id><Status>InProgress</Status><CreateTime>2025-05-13T10:00:00Z</CreateTime>%s</Invalidation>`,
		strings.TrimPrefix(string(body), `<?xml version="1.0" encoding="UTF-8"?>`))
}
