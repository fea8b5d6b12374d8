/* hash.h — uthash as the library uses it. Every file that keeps a uthash table includes this
 * header, never <uthash.h> itself: by default an allocation failure inside HASH_ADD* calls
 * exit(-1) (uthash_fatal), and the library never exits. Here uthash runs with HASH_NONFATAL_OOM:
 * a failed add leaves the table as it was, the element is not in it, and GCR_HASH_ADD_FAILED(el)
 * says so right after the add; the caller then frees (or keeps) the element and reports
 * GCR_ERR_OOM. Elements name their handle `hh`. */
#ifndef GCR_HASH_H
#define GCR_HASH_H

#ifdef UTHASH_H
#error "hash.h must come before any other inclusion of <uthash.h>"
#endif

#define HASH_NONFATAL_OOM 1
/* uthash calls this with the element it could not add (it has taken it out of every list) */
#define uthash_nonfatal_oom(el) ((el)->hh.tbl = NULL)
#include <uthash.h>

/* true when the HASH_ADD* of el just before failed for lack of memory */
#define GCR_HASH_ADD_FAILED(el) ((el)->hh.tbl == NULL)

#endif /* GCR_HASH_H */
