package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
)

// The readiness probe's session (package readiness): a refresh token this process
// signs for the largest id, which no user has (ids are an identity counted from 1), and
// a random session id, which no session has. It authenticates nobody: a request that
// carries it is 404 User not found, or 401 should such a user ever exist, since the
// session must be a live one of theirs. It lives a minute and never leaves the process
// (the probe's requests are served in it).
const probeUserID = math.MaxInt64

// ProbeToken signs the readiness probe's refresh token.
func (s *Sessions) ProbeToken() (string, error) {
	now := s.now().Truncate(time.Second)
	return s.sign(probeUserID, randomUUID(), typeRefresh, now, now.Add(time.Minute))
}

// Ready looks up the probe's session as Authenticate would, for the function's
// readiness probe: the database answers that no such user exists.
func (s *Sessions) Ready(ctx context.Context) error {
	_, err := s.store.SessionUser(ctx, probeUserID, randomUUID())
	if e, ok := apperr.As(err); ok && e.Code == apperr.NotFound {
		return nil
	}
	if err == nil {
		return errors.New("auth: the probe's session names a user")
	}
	return fmt.Errorf("auth: session lookup: %w", err)
}

// randomUUID is a random (version 4) UUID in its canonical form.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
