/* trace.h — recording op calls into a capture IR (capture/trace.c): data in (a validated call and
 * its result's meta), data out (the IR grows a node and a value; the caller gets a traced tensor
 * handle). Which trace records and when is the capture API's business (replay/capture.c). */
#ifndef GCR_CAPTURE_TRACE_H
#define GCR_CAPTURE_TRACE_H

#include "ir.h"

/* Records call c (validated to meta out) in trace ir: its inputs become values of ir (external
 * tensors with data are added as inputs or constants on first use), its result a new value with a
 * traced handle (t->trace = ir->owner, t->value). NULL, with ir->failed set, on a bad input or OOM. */
gcr_tensor *gcr_trace_record_in(gcr_ir *ir, const gcr_call *c, const gcr_meta *out);
/* Whether t is the handle of one of ir's values (a result recorded in ir). */
bool gcr_trace_owns(const gcr_ir *ir, const gcr_tensor *t);
/* Frees a trace with the traced handles it made (NULL: nothing). */
void gcr_trace_free(gcr_ir *ir);
/* Whether the first n values of trace ir read storage st (an external input or constant). */
bool gcr_trace_reads(const gcr_ir *ir, int n, const gcr_storage *st);

#endif /* GCR_CAPTURE_TRACE_H */
