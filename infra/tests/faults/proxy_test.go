package faults_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy is a TCP relay on a fixed loopback port in front of a backing service, so that
// the service under test keeps one address while the backend is stopped, restarted on
// another port, refused or made to hang. It only relays bytes; the faults themselves
// are the real services' (stopped, frozen) or a closed or silent socket.
type proxy struct {
	ln net.Listener

	mu     sync.Mutex
	target string // forward here; "" with hang false: refuse
	hang   bool   // accept and read, never answer
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { _ = ln.Close(); p.cutAll() })
	return p
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

// forward relays new connections to target (after cutting the open ones when the
// target changes).
func (p *proxy) forward(target string) { p.set(target, false) }

// refuse closes every connection at once, as a stopped service's port would.
func (p *proxy) refuse() { p.set("", false) }

// silence accepts connections and never answers, as a hung service would.
func (p *proxy) silence() { p.set("", true) }

func (p *proxy) set(target string, hang bool) {
	p.mu.Lock()
	changed := p.target != target || p.hang != hang
	p.target, p.hang = target, hang
	p.mu.Unlock()
	if changed {
		p.cutAll()
	}
}

func (p *proxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *proxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns[c] = true
	p.mu.Unlock()
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target, hang := p.target, p.hang
		p.mu.Unlock()
		switch {
		case hang:
			p.track(c)
			go func() { _, _ = io.Copy(io.Discard, c) }()
		case target == "":
			_ = c.Close()
		default:
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.track(c)
			p.track(up)
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}
}
