package cdn

import (
	"container/list"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/images"
)

// entryOverhead is what an entry costs besides its image bytes (key, list element,
// map slot, headers), counted against the bound.
const entryOverhead = 256

// cacheKey names a cached image: a user and a resolution.
type cacheKey struct {
	id  int64
	res string
}

type cacheEntry struct {
	key     cacheKey
	pic     *picture
	size    int64
	expires time.Time
}

// cache is a least-recently-used cache of served images, bounded in bytes, whose
// entries expire after ttl. A dropped user's loads that were under way when the drop
// happened are not cached (epoch), so a change is never undone by a slow reader.
type cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	ttl     time.Duration
	now     func() time.Time
	order   *list.List // front: most recently used
	entries map[cacheKey]*list.Element
	drops   uint64
}

func newCache(maxBytes int64, ttl time.Duration, now func() time.Time) *cache {
	return &cache{max: maxBytes, ttl: ttl, now: now, order: list.New(), entries: map[cacheKey]*list.Element{}}
}

// get returns the live entry of key.
func (c *cache) get(key cacheKey) (*picture, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.pic, true
}

// epoch is the number of drops so far; take it before loading what add will cache.
func (c *cache) epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drops
}

// add caches pic under key unless a drop happened since epoch or it is larger than
// the whole cache. A shared picture (a default image) costs only the overhead.
func (c *cache) add(key cacheKey, pic *picture, shared bool, epoch uint64) {
	size := int64(entryOverhead)
	if !shared {
		size += int64(len(pic.data))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.drops || size > c.max {
		return
	}
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	for c.size+size > c.max {
		c.remove(c.order.Back())
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, pic: pic, size: size, expires: c.now().Add(c.ttl)})
	c.size += size
}

// drop forgets every resolution of user id.
func (c *cache) drop(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops++
	for _, res := range []string{images.ResHigh, images.ResScaled} {
		if el, ok := c.entries[cacheKey{id: id, res: res}]; ok {
			c.remove(el)
		}
	}
}

func (c *cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.size -= e.size
}
