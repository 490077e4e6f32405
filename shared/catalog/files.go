package catalog

// StoredFile is an object of the image bucket: its content and metadata.
type StoredFile struct {
	Data        []byte
	ContentType string
	ETag        string // as the store reports it, quotes included
}
