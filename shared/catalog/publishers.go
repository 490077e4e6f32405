package catalog

import (
	"net/url"
	"strings"
)

// MsgPublisherNotFound is the OpenAPI document's 404 message for an unknown publisher.
const MsgPublisherNotFound = "Publisher not found"

// Orders of the publisher and publication lists: by name, or by when the row was added.
const (
	PublisherOrderNameAsc   = "name-asc"
	PublisherOrderNameDesc  = "name-desc"
	PublisherOrderAddedAsc  = "added-asc"
	PublisherOrderAddedDesc = "added-desc"
)

// PublisherOrders are the order values the publisher and publication lists accept.
var PublisherOrders = []string{PublisherOrderNameAsc, PublisherOrderNameDesc, PublisherOrderAddedAsc, PublisherOrderAddedDesc}

// DefaultLanguage is the language of localized metadata when the caller names none.
const DefaultLanguage = "English"

// PublisherListItem is one publisher in a client's publisher list.
type PublisherListItem struct {
	ID          int64  `json:"id" db:"id"`
	Name        string `json:"name" db:"name"`
	ShortName   string `json:"short-name" db:"short_name"`
	Slug        string `json:"slug" db:"slug"`
	Country     string `json:"country" db:"country"`
	Website     string `json:"website" db:"website"`
	Headquarter string `json:"headquarter" db:"headquarter"`
	SeriesCount int64  `json:"series_count" db:"series_count"`
	// FoundingDate is "YYYY-MM-DD", or "" when unknown.
	FoundingDate string `json:"founding_date" db:"founding_date"`
	Image        string `json:"image" db:"image"`
	ImageSource  string `json:"image_source" db:"image_source"`
	Client       int64  `json:"client" db:"client_id"`
}

// Publisher is the detail view of a publisher.
type Publisher struct {
	ID      int64  `json:"id" db:"id"`
	Name    string `json:"name" db:"name"`
	Slug    string `json:"slug" db:"slug"`
	Image   string `json:"image" db:"image"`
	Website string `json:"website" db:"website"`
	Country string `json:"country" db:"country"`
	// Domain is the website's host without "www.", derived by WebsiteDomain.
	Domain       string                 `json:"domain" db:"-"`
	Descriptions []PublisherDescription `json:"descriptions" db:"descriptions"`
	Aliases      []PublisherAlias       `json:"aliases" db:"aliases"`
	Relations    []PublisherRelation    `json:"relations" db:"relations"`
}

// PublisherDescription is a publisher's description in one language.
type PublisherDescription struct {
	ID          int64  `json:"id"`
	Description string `json:"description"`
	Language    string `json:"language"`
	Source      string `json:"source"`
}

// PublisherAlias is another name of a publisher.
type PublisherAlias struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Language string `json:"language"`
}

// PublisherRelation links a publisher to another one; RelationID, Name, Image and
// Slug are the related publisher's.
type PublisherRelation struct {
	ID         int64  `json:"id"`
	RelationID int64  `json:"relation_id"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Image      string `json:"image"`
	Slug       string `json:"slug"`
}

// Publication is a series in a publisher's publication list, with its metadata in the
// caller's language.
type Publication struct {
	ID     int64  `json:"id" db:"id"`
	Name   string `json:"name" db:"name"`
	Slug   string `json:"slug" db:"slug"`
	Type   string `json:"type" db:"type"`
	Origin string `json:"origin" db:"origin"`
	// Alias is the series' first alias in the caller's language, "" when it has none.
	Alias   string             `json:"alias" db:"alias"`
	Aliases []PublicationAlias `json:"aliases" db:"aliases"`
	// Description is in the caller's language, else English, else "".
	Description string `json:"description" db:"description"`
	Tags        []Tag  `json:"tags" db:"tags"`
	// Volume is the lowest-numbered volume, nil when the series has none.
	Volume *PreviewVolume `json:"volume" db:"volume"`
}

// PublicationAlias is another title of a series.
type PublicationAlias struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Language string `json:"language"`
}

// PreviewVolume is the volume whose cover represents a series in lists.
type PreviewVolume struct {
	ID          int64   `json:"id"`
	CoverPath   string  `json:"cover_path"`
	AspectRatio float64 `json:"aspect_ratio"`
	NSFW        int     `json:"nsfw"`
	NSFW18      int     `json:"nsfw18"`
}

// PublisherFilter selects a page of a client's publishers. Order is one of
// PublisherOrders, or "" for the order of ids.
type PublisherFilter struct {
	Client int64
	Search string
	Order  string
	Limit  int64
	Offset int64
}

// PublicationPage is one page of a publisher's series with the number of all that
// match: exact when Exact, else a lower bound (a search past its exact threshold).
type PublicationPage struct {
	Publications []Publication
	Total        int64
	Exact        bool
}

// PublicationFilter selects a page of one publisher's series within a client. Order
// is one of PublisherOrders; Language picks the localized alias and description.
type PublicationFilter struct {
	Publisher int64
	Client    int64
	Search    string
	Order     string
	Language  string
	Limit     int64
	Offset    int64
}

// WebsiteDomain is the host of a website address without a leading "www.", lower
// case and without a port: "https://www.Kodansha.co.jp/en/" -> "kodansha.co.jp".
// An address without a scheme is read as https; "" and unparsable addresses give "".
func WebsiteDomain(website string) string {
	website = strings.TrimSpace(website)
	if website == "" {
		return ""
	}
	if !strings.Contains(website, "://") {
		website = "https://" + strings.TrimPrefix(website, "//")
	}
	u, err := url.Parse(website)
	if err != nil {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return strings.TrimPrefix(host, "www.")
}
