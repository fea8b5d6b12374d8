#!/bin/sh
# check_symbols.sh — the shared library exports only gcr_/GCR_ symbols (besides the C runtime's
# _init/_fini and linker markers).
lib=${BUILD:-build}/lib/libgcr.so
if [ ! -f "$lib" ]; then echo "FAIL: $lib missing"; echo "0 passed, 1 failed"; exit 1; fi
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -vE '^(gcr_|GCR_|_init$|_fini$|_edata$|_end$|__bss_start$)')
n=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -cE '^(gcr_|GCR_)')
if [ -n "$bad" ]; then echo "FAIL: non-gcr symbols exported:"; echo "$bad"; echo "0 passed, 1 failed"; exit 1; fi
if [ "$n" -lt 50 ]; then echo "FAIL: only $n gcr_ symbols exported"; echo "0 passed, 1 failed"; exit 1; fi
echo "$n gcr_ symbols, no others"
echo "1 passed, 0 failed"
