package catalog

// MsgTagNotFound is the OpenAPI document's 404 message for an unknown tag id.
const MsgTagNotFound = "Tag not found"

// Tag is a genre, theme or demographic a client's series are labelled with.
type Tag struct {
	ID   int64  `json:"id" db:"id"`
	Name string `json:"name" db:"name"`
	Type string `json:"type" db:"type"`
}

// TagDetail is a tag with the number of series labelled with it.
type TagDetail struct {
	Tag
	SeriesCount int64 `json:"series_count" db:"series_count"`
}
