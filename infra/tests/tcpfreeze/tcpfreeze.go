// Package tcpfreeze is a TCP relay for tests that can freeze its connections: bytes
// stop moving both ways and the connections stay open, as with a stopped (SIGSTOP)
// server or a silent network, which no server-side timeout can end.
package tcpfreeze

import (
	"net"
	"sync"
	"testing"
)

// Relay forwards the connections it accepts to a target address.
type Relay struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen bool
	thaw   chan struct{}
}

// New starts a relay to target on a loopback port; it stops (thawed) at the test's end.
func New(t testing.TB, target string) *Relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{ln: ln, thaw: make(chan struct{})}
	t.Cleanup(func() { ln.Close(); r.Freeze(false) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go r.pipe(c, s)
			go r.pipe(s, c)
		}
	}()
	return r
}

// Addr is the relay's host:port.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Freeze holds (true) or releases (false) every byte in flight.
func (r *Relay) Freeze(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen && !v {
		close(r.thaw)
		r.thaw = make(chan struct{})
	}
	r.frozen = v
}

// pipe copies src to dst, holding each chunk while frozen.
func (r *Relay) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			frozen, thaw := r.frozen, r.thaw
			r.mu.Unlock()
			if frozen {
				<-thaw
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
