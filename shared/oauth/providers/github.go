package providers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
)

// githubUser is the part of GitHub's /user document the service uses.
type githubUser struct {
	ID        int64   `json:"id"`
	Login     string  `json:"login"`
	Name      *string `json:"name"`
	Email     *string `json:"email"` // the public profile address; null when none is chosen
	AvatarURL string  `json:"avatar_url"`
}

// githubEmail is one entry of GitHub's /user/emails list.
type githubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

func fetchGitHub(ctx context.Context, p *provider, tok *oauth2.Token) (Profile, error) {
	var u githubUser
	if err := p.getJSON(ctx, tok, p.ep.ProfileURL, &u); err != nil {
		return Profile{}, err
	}
	if u.ID <= 0 {
		return Profile{}, fmt.Errorf("%w: github: the user document has no id", ErrProfile)
	}
	name := u.Login
	if u.Name != nil && *u.Name != "" {
		name = *u.Name
	}
	profile := Profile{ProviderUserID: strconv.FormatInt(u.ID, 10), Username: name, AvatarURL: ptr(u.AvatarURL)}
	// Only an address that /user/emails lists as verified is kept: the primary one,
	// else the public one of /user. A user may withhold the user:email scope
	// (GitHub lets the user edit the requested scopes), and /user/emails may fail on
	// its own; the login then goes on without an email, as Auth.js does, rather than
	// trusting /user's public address unchecked.
	var emails []githubEmail
	if err := p.getJSON(ctx, tok, p.ep.EmailsURL, &emails); err != nil {
		if errors.Is(err, ErrRateLimited) || ctx.Err() != nil {
			return Profile{}, err
		}
		return profile, nil
	}
	profile.Email = verifiedGitHubEmail(emails, deref(u.Email))
	return profile, nil
}

// verifiedGitHubEmail picks the primary verified address of the list, else the
// public address when the list has it verified.
func verifiedGitHubEmail(emails []githubEmail, public string) *string {
	for _, e := range emails {
		if e.Primary && e.Verified && e.Email != "" {
			return ptr(e.Email)
		}
	}
	for _, e := range emails {
		if public != "" && e.Verified && strings.EqualFold(e.Email, public) {
			return ptr(e.Email)
		}
	}
	return nil
}
