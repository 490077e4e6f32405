// Package awsapitest checks, in the stand-ins of AWS services that tests run, that a
// request is signed as AWS would accept it.
package awsapitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mediacatalog/service/shared/awsconfig"
)

// VerifySignature signs the request r again, as the service does on receipt (from
// the headers its signature names, the body's SHA-256 and the X-Amz-Date), with the
// credentials the environment gives local endpoints, and reports a mismatch, a
// signature for another service or region, or an X-Amz-Content-Sha256 that is not the
// body's. body is r's body, already read; signerOpts are the service's signer options
// (S3 signs paths unescaped).
func VerifySignature(t testing.TB, r *http.Request, body []byte, service, region string, signerOpts ...func(*v4.SignerOptions)) {
	t.Helper()
	auth := r.Header.Get("Authorization")
	signed, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok || !strings.Contains(signed, "/"+region+"/"+service+"/aws4_request") {
		t.Errorf("Authorization %q: not a SigV4 signature for %s in %s", auth, service, region)
		return
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != hash {
		t.Errorf("X-Amz-Content-Sha256 %q, want the body's %q", got, hash)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Errorf("X-Amz-Date: %v", err)
		return
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(signed, ", ") {
		if names, ok := strings.CutPrefix(part, "SignedHeaders="); ok {
			for _, h := range strings.Split(names, ";") {
				if h != "host" {
					again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
				}
			}
		}
	}
	again.Header.Del("Authorization")
	creds, err := awsconfig.Load(region, "http://"+r.Host, os.Getenv).Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := v4.NewSigner(signerOpts...).SignHTTP(context.Background(), creds, again, hash, service, region, at); err != nil {
		t.Fatal(err)
	}
	if want := again.Header.Get("Authorization"); want != auth {
		t.Errorf("the signature does not verify:\n got %s\nwant %s", auth, want)
	}
}
