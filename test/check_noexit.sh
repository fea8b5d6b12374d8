#!/bin/sh
# check_noexit.sh — gcr.h promises that the library never exits or aborts: the shared library
# calls none of the functions that end the process, and uthash (whose default out-of-memory
# handler calls exit) is included only through lib/hash.h, which makes that handler non-fatal.
lib=${BUILD:-build}/lib/libgcr.so
if [ ! -f "$lib" ]; then echo "FAIL: $lib missing"; echo "0 passed, 1 failed"; exit 1; fi
pass=0; fail=0
calls=$(nm -D --undefined-only "$lib" | awk '{print $2}' | sed 's/@.*//' |
        grep -xE 'exit|_exit|_Exit|quick_exit|abort|__assert_fail|__assert_perror_fail|__assert|err|errx|verr|verrx')
if [ -n "$calls" ]; then echo "FAIL: $lib calls" $calls; fail=$((fail+1)); else pass=$((pass+1)); fi
direct=$(grep -rlE '#[[:space:]]*include[[:space:]]*<uthash\.h>' lib capture replay | grep -vx 'lib/hash.h')
if [ -n "$direct" ]; then echo "FAIL: <uthash.h> included directly (include lib/hash.h) by" $direct; fail=$((fail+1)); else pass=$((pass+1)); fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
