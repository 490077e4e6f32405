// Package motoserver starts moto's server mode for tests: the AWS APIs' stand-in of
// the Python ecosystem (pip install 'moto[server]'), speaking their wire formats, for
// the operators' tools whose APIs the project has no other stand-in for (Secrets
// Manager's writes, Lambda's versions and aliases, RDS's backup settings), and the
// versioned S3 of the restore's tests and rehearsal (gofakes3 does not make a version
// current again when its delete marker is removed).
package motoserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Start runs a moto server on a free loopback port for the test and returns its URL.
// It fails the test, saying how to install moto, when it cannot start.
func Start(t testing.TB) string {
	t.Helper()
	var log io.Writer
	if testing.Verbose() {
		log = os.Stderr
	}
	url, stop, err := Run(log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// Run starts a moto server on a free loopback port, its output to log (nil: none), and
// returns its URL and the function that stops it (the restore rehearsal's S3).
func Run(log io.Writer) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("moto server (pip install 'moto[server]'): %w", err)
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 300 {
		if resp, err := http.Get(url + "/moto-api/"); err == nil {
			resp.Body.Close()
			return url, stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, errors.New("moto server did not start (pip install 'moto[server]')")
}

// LambdaRole creates the role "lambda" in the IAM of the moto server at url (its Lambda
// refuses a function whose role it does not know), with IAM's Query API, which has no
// client in this module, and returns the role's ARN.
func LambdaRole(t testing.TB, url string) string {
	t.Helper()
	form := neturl.Values{"Action": {"CreateRole"}, "Version": {"2010-05-08"}, "RoleName": {"lambda"},
		"AssumeRolePolicyDocument": {`{"Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`}}
	req, _ := http.NewRequest("POST", url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// moto picks the service from the credential scope.
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("create role: %s", resp.Status)
	}
	return "arn:aws:iam::123456789012:role/lambda"
}
