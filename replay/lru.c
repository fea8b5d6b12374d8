/* lru.c — the recency list behind the graph and region caches (lru.h). */
#include "lru.h"
#include <stddef.h>

void gcr_lru_init(gcr_lru *l)
{
    l->head.prev = l->head.next = &l->head;
    l->count = 0;
}

static void link_front(gcr_lru *l, gcr_lru_link *e)
{
    e->prev = &l->head;
    e->next = l->head.next;
    l->head.next->prev = e;
    l->head.next = e;
}

static void lru_unlink(gcr_lru_link *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

void gcr_lru_add(gcr_lru *l, gcr_lru_link *e)
{
    link_front(l, e);
    l->count++;
}

void gcr_lru_touch(gcr_lru *l, gcr_lru_link *e)
{
    lru_unlink(e);
    link_front(l, e);
}

void gcr_lru_remove(gcr_lru *l, gcr_lru_link *e)
{
    lru_unlink(e);
    l->count--;
}

gcr_lru_link *gcr_lru_victim(const gcr_lru *l, int cap, const gcr_lru_link *keep)
{
    if (l->count <= cap) return NULL;
    gcr_lru_link *e = l->head.prev;
    if (e == keep) e = e->prev;
    return e == &l->head ? NULL : e;
}
