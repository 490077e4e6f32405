package providers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
)

const discordCDN = "https://cdn.discordapp.com"

// discordUser is the part of Discord's /users/@me document the service uses.
type discordUser struct {
	ID            string  `json:"id"`
	Username      string  `json:"username"`
	GlobalName    *string `json:"global_name"`
	Discriminator string  `json:"discriminator"`
	Avatar        *string `json:"avatar"`
	Email         *string `json:"email"`    // only with the email scope
	Verified      bool    `json:"verified"` // only with the email scope
}

func fetchDiscord(ctx context.Context, p *provider, tok *oauth2.Token) (Profile, error) {
	var u discordUser
	if err := p.getJSON(ctx, tok, p.ep.ProfileURL, &u); err != nil {
		return Profile{}, err
	}
	id, err := strconv.ParseUint(u.ID, 10, 64)
	if err != nil {
		return Profile{}, fmt.Errorf("%w: discord: user id %q is not a snowflake", ErrProfile, clip(u.ID))
	}
	name := u.Username
	if u.GlobalName != nil && *u.GlobalName != "" {
		name = *u.GlobalName
	}
	profile := Profile{ProviderUserID: u.ID, Username: name}
	avatar := discordAvatarURL(id, u.Discriminator, deref(u.Avatar))
	profile.AvatarURL = &avatar
	if u.Verified && u.Email != nil {
		profile.Email = ptr(*u.Email)
	}
	return profile, nil
}

// discordAvatarURL is the CDN address of a user's avatar: the uploaded one
// (animated ones, hashes starting "a_", as GIF), else the default avatar
// Discord derives from the id (new usernames, discriminator "0") or from the
// legacy discriminator.
func discordAvatarURL(id uint64, discriminator, hash string) string {
	if hash != "" && validAvatarHash(hash) {
		ext := "png"
		if strings.HasPrefix(hash, "a_") {
			ext = "gif"
		}
		return fmt.Sprintf("%s/avatars/%d/%s.%s", discordCDN, id, hash, ext)
	}
	index := (id >> 22) % 6
	if d, err := strconv.ParseUint(discriminator, 10, 64); err == nil && d != 0 {
		index = d % 5
	}
	return fmt.Sprintf("%s/embed/avatars/%d.png", discordCDN, index)
}

// validAvatarHash guards the CDN path against anything but a hash.
func validAvatarHash(h string) bool {
	if len(h) > 64 {
		return false
	}
	for _, r := range h {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_') {
			return false
		}
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
