package catalog

// The longest text, in characters (Unicode code points, as PostgreSQL's length counts
// them), that the API accepts in each field; docs/input-limits.md lists them per route
// and the OpenAPI document carries each as maxLength. The bounds keep every value well
// inside a btree index row (2704 bytes: 4 bytes per character at most) and keep the
// work of the search texts, their trigrams and substring counts, which grows with the
// text, small per row.
const (
	// MaxUsername is longer than the sign-up names (a slug of at most 32, then a
	// numeric suffix when taken).
	MaxUsername        = 64
	MaxRoleName        = 64
	MaxPermissionName  = 64
	MaxDescription     = 500 // role and permission descriptions
	MaxPersonName      = 100 // a contributor's first_name and last_name, each
	MaxLabel           = 50  // a contributor's gender and type, a relation's type
	MaxLanguage        = 32  // language of an alias or description; lang, user_lang
	MaxAliasTitle      = 200
	MaxContributorText = 10000 // a contributor description's text
	MaxLink            = 2048  // a link, a description's source
	MaxSearch          = 100   // the search query parameter of every list
)
