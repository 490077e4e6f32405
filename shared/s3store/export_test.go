package s3store

// ObjectURL exposes the address of a key for the addressing tests.
func ObjectURL(s *Store, key string) string { return s.objectURL(key) }
