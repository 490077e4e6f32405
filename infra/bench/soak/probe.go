package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/mediacatalog/service/infra/bench/procstatus"
)

// Sample is the server process's figures at one moment: from /proc/<pid> (resident
// memory, open files) and from its expvar variables (the Go heap, goroutines).
type Sample struct {
	At            time.Duration `json:"-"`    // since the workload started
	AtSeconds     float64       `json:"at_s"` // the same, in seconds
	Label         string        `json:"label"`
	Requests      int64         `json:"requests"` // answered so far
	RSSBytes      uint64        `json:"rss_bytes"`
	AnonBytes     uint64        `json:"rss_anon_bytes"` // of RSSBytes, not backed by a file (the binary's pages are)
	HeapInuse     uint64        `json:"heap_inuse_bytes"`
	HeapLive      uint64        `json:"heap_live_bytes"` // live after the last collection
	HeapObjects   uint64        `json:"heap_objects"`
	Goroutines    int           `json:"goroutines"`
	OpenFiles     int           `json:"open_files"`
	Unexpected    int64         `json:"unexpected"` // unexpected answers so far, fault windows included
	SpansExported int64         `json:"span_batches"`
}

// probe reads the server's figures.
type probe struct {
	pid   int
	debug string
	http  *http.Client
}

func (p probe) read(ctx context.Context) (Sample, error) {
	var s Sample
	st, err := procstatus.Sizes(p.pid, "VmRSS", "RssAnon")
	if err != nil {
		return s, err
	}
	s.RSSBytes, s.AnonBytes = st[0], st[1]
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
	if err != nil {
		return s, err
	}
	s.OpenFiles = len(fds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.debug, nil)
	if err != nil {
		return s, err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return s, fmt.Errorf("read %s: %w", p.debug, err)
	}
	defer resp.Body.Close()
	var vars struct {
		Goroutines    int    `json:"goroutines"`
		HeapLiveBytes uint64 `json:"heap_live_bytes"`
		Memstats      struct {
			HeapInuse   uint64
			HeapObjects uint64
		} `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		return s, fmt.Errorf("read %s: %w", p.debug, err)
	}
	s.Goroutines, s.HeapLive = vars.Goroutines, vars.HeapLiveBytes
	s.HeapInuse, s.HeapObjects = vars.Memstats.HeapInuse, vars.Memstats.HeapObjects
	return s, nil
}
