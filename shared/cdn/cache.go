package cdn

import (
	"container/list"
	"sync"
)

// entryOverhead is what an entry costs besides its image bytes (key, list element,
// map slot, headers), counted against the bound.
const entryOverhead = 256

// cacheKey names a cached image: a stored image reference (imageset.ImageSet.Ref) and
// a resolution. A change of picture writes a new reference (each upload gets keys of
// its own) and never reuses one, so an entry can never hold bytes other than those its
// reference names: it needs neither an expiry nor a drop when a picture changes, and a
// reference no user points at any more is simply never asked for again (the LRU order
// evicts it).
type cacheKey struct {
	ref string
	res string
}

type cacheEntry struct {
	key  cacheKey
	pic  *picture
	size int64
}

// cache is a least-recently-used cache of served images, bounded in bytes.
type cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	order   *list.List // front: most recently used
	entries map[cacheKey]*list.Element
}

func newCache(maxBytes int64) *cache {
	return &cache{max: maxBytes, order: list.New(), entries: map[cacheKey]*list.Element{}}
}

// get returns the entry of key.
func (c *cache) get(key cacheKey) (*picture, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).pic, true
}

// add caches pic under key unless it is larger than the whole cache.
func (c *cache) add(key cacheKey, pic *picture) {
	size := int64(entryOverhead + len(pic.data))
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.max {
		return
	}
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	for c.size+size > c.max {
		c.remove(c.order.Back())
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, pic: pic, size: size})
	c.size += size
}

func (c *cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.size -= e.size
}
