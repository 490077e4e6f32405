package catalog

import (
	"net/url"
	"strings"
)

// ContributorListItem is one contributor in the administrative list.
type ContributorListItem struct {
	ID        int64   `json:"id"`
	FirstName string  `json:"first_name"`
	LastName  *string `json:"last_name"`
	Slug      string  `json:"slug"`
	// Image is the avatar's storage key, "" when the contributor has none.
	Image string `json:"image"`
	// LockedBy is the holder of the live edit lock, nil when nobody edits the contributor.
	LockedBy *LockHolder `json:"locked_by"`
}

// ContributorQuery selects a page of a client's contributors.
type ContributorQuery struct {
	Client int64
	// Search is a case-insensitive substring of the first name, the last name or the
	// full name "first last"; "" matches every contributor.
	Search string
	// Descending orders by name from Z to A (first name, last name, id).
	Descending bool
	Limit      int64
	Offset     int64
}

// ContributorPage is one page of contributors with the number of all that match:
// exact when Exact, else a lower bound (a search past its exact threshold).
type ContributorPage struct {
	Total        int64
	Exact        bool
	Contributors []ContributorListItem
}

// Contributor is the administrative detail of a contributor.
type Contributor struct {
	ID        int64   `json:"id"`
	FirstName string  `json:"first_name"`
	LastName  *string `json:"last_name"`
	Slug      string  `json:"slug"`
	// Image is the avatar's storage key, "" when the contributor has none.
	Image string `json:"image"`
	// Gender and Type are "" when unset.
	Gender       string                   `json:"gender"`
	Type         string                   `json:"type"`
	Public       bool                     `json:"public"`
	Links        []ContributorLink        `json:"links"`
	Aliases      []ContributorAlias       `json:"aliases"`
	Descriptions []ContributorDescription `json:"descriptions"`
	Relations    []ContributorRelation    `json:"relations"`
}

// ContributorLink is a web address about a contributor.
type ContributorLink struct {
	URL string `json:"url"`
	// Domain is the host of URL without a leading "www.".
	Domain string `json:"domain"`
}

// NewContributorLink returns the link to rawURL with its domain. An address without a
// scheme ("example.com/a") is read as if it had one.
func NewContributorLink(rawURL string) ContributorLink {
	return ContributorLink{URL: rawURL, Domain: linkDomain(rawURL)}
}

func linkDomain(rawURL string) string {
	s := strings.TrimSpace(rawURL)
	if !strings.Contains(s, "://") {
		s = "http://" + strings.TrimPrefix(s, "//")
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// ContributorAlias is another name of a contributor in a language.
type ContributorAlias struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Language string `json:"language"`
}

// ContributorDescription is a text about a contributor in a language, with its source.
type ContributorDescription struct {
	ID          int64  `json:"id"`
	Description string `json:"description"`
	Language    string `json:"language"`
	Source      string `json:"source"`
}

// ContributorRelation links a contributor to another one, e.g. a pen name or a member
// of a group. RelationID, Name (the full name), Image (avatar key, "" for none) and
// Slug are the related contributor's.
type ContributorRelation struct {
	ID         int64  `json:"id"`
	RelationID int64  `json:"relation_id"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Image      string `json:"image"`
	Slug       string `json:"slug"`
}

// NewContributor is a contributor to add to a client's catalog.
type NewContributor struct {
	Client    int64
	FirstName string
	LastName  *string
	// Slug is the base of the new contributor's slug, made from the name by the
	// admincontributors group; "" is "contributor".
	Slug string
}

// NewContributorAlias is an alias to add.
type NewContributorAlias struct {
	Title    string `json:"title"`
	Language string `json:"language"`
}

// NewContributorDescription is a description to add.
type NewContributorDescription struct {
	Description string `json:"description"`
	Language    string `json:"language"`
	Source      string `json:"source"`
}

// NewContributorRelation is a relation to add.
type NewContributorRelation struct {
	RelationID int64  `json:"relation_id"`
	Type       string `json:"type"`
}

// ContributorRelationChange replaces the target and type of an existing relation.
type ContributorRelationChange struct {
	ID         int64  `json:"id"`
	RelationID int64  `json:"relation_id"`
	Type       string `json:"type"`
}

// ContributorEdit is a whole edit of a contributor, applied at once or not at all.
// The scalar fields replace the stored ones (nil: unset); Links replaces every link.
// The Removed and Modified lists name rows of this contributor by id.
type ContributorEdit struct {
	FirstName string
	LastName  *string
	Gender    *string
	Type      *string
	Public    bool
	Links     []string

	AddedAliases   []NewContributorAlias
	RemovedAliases []int64

	AddedDescriptions    []NewContributorDescription
	RemovedDescriptions  []int64
	ModifiedDescriptions []ContributorDescription

	AddedRelations    []NewContributorRelation
	RemovedRelations  []int64
	ModifiedRelations []ContributorRelationChange
}
