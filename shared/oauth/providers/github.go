package providers

import (
	"context"
	"fmt"
	"strconv"

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
	// GitHub lets a user choose only a verified address as the public one,
	// so a non-null email on /user is verified. Otherwise the primary
	// address counts, and only when it is verified.
	if u.Email != nil && *u.Email != "" {
		profile.Email = ptr(*u.Email)
		return profile, nil
	}
	var emails []githubEmail
	if err := p.getJSON(ctx, tok, p.ep.EmailsURL, &emails); err != nil {
		return Profile{}, err
	}
	for _, e := range emails {
		if e.Primary && e.Verified && e.Email != "" {
			profile.Email = ptr(e.Email)
			break
		}
	}
	return profile, nil
}
