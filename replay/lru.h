/* lru.h — the least-recently-used cache policy that a graph's variants and a region's entries
 * share: an intrusive recency list (a link embedded in each cached item) with a kept count, so
 * marking an item used, counting and finding the eviction victim are O(1). */
#ifndef GCR_REPLAY_LRU_H
#define GCR_REPLAY_LRU_H

#include <stddef.h>

typedef struct gcr_lru_link {
    struct gcr_lru_link *prev, *next;
} gcr_lru_link;

/* The list: head.next is the most recently used item, head.prev the least. */
typedef struct gcr_lru {
    gcr_lru_link head;
    int count;
} gcr_lru;

void gcr_lru_init(gcr_lru *l);
/* Adds e as the most recently used item. */
void gcr_lru_add(gcr_lru *l, gcr_lru_link *e);
/* e ran: it becomes the most recently used item. */
void gcr_lru_touch(gcr_lru *l, gcr_lru_link *e);
void gcr_lru_remove(gcr_lru *l, gcr_lru_link *e);
/* The item to evict while l holds more than cap: the least recently used one other than keep
 * (the item that just ran), or NULL when l holds at most cap or nothing but keep. The caller
 * removes and frees it, then asks again. */
gcr_lru_link *gcr_lru_victim(const gcr_lru *l, int cap, const gcr_lru_link *keep);

/* Visits l's links, most recently used first (the body must not remove p). */
#define GCR_LRU_FOREACH(p, l) for (gcr_lru_link *p = (l)->head.next; p != &(l)->head; p = p->next)
/* The item that embeds link p as its member `field`. */
#define GCR_LRU_ITEM(p, type, field) ((type *)(void *)((char *)(p) - offsetof(type, field)))

#endif /* GCR_REPLAY_LRU_H */
