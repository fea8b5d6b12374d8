#!/bin/sh
# check_install.sh — `make install PREFIX=...` lays out the header, both libraries and gcr.pc, and a
# program builds against the installed shared library through pkg-config and runs, loading nothing from
# the build tree; `make uninstall` takes it all back.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $1"; echo "0 passed, 1 failed"; exit 1; }
b=${BUILD:-build}; [ "${SAN:-0}" = 1 ] && b=${b%-san}  # the Makefile appends -san itself
make -s install PREFIX="$dir/usr" BUILD="$b" CUDA="${CUDA:-}" SAN="${SAN:-0}" >/dev/null 2>&1 || fail "make install"
for f in include/gcr.h lib/libgcr.a lib/libgcr.so lib/libgcr.so.0 lib/pkgconfig/gcr.pc; do
  [ -e "$dir/usr/$f" ] || fail "missing $f"
done
cat > "$dir/app.c" <<'C'
#include <gcr.h>
#include <stdio.h>
int main(void) {
    gcr_ctx *ctx;
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return 1;
    printf("%s\n", gcr_ctx_device_name(ctx));
    gcr_ctx_destroy(ctx);
    return 0;
}
C
export PKG_CONFIG_PATH="$dir/usr/lib/pkgconfig"
flags=$(pkg-config --cflags --libs gcr) || fail "pkg-config gcr"
# shellcheck disable=SC2086
${CC:-cc} "$dir/app.c" -o "$dir/app" $flags $CFLAGS -Wl,-rpath,"$dir/usr/lib" 2>"$dir/err" || { cat "$dir/err"; fail "compile against installed gcr"; }
out=$(LD_LIBRARY_PATH="$dir/usr/lib" "$dir/app") || fail "installed app did not run"
[ "$out" = "cpu" ] || fail "unexpected output $out"
# the installed libgcr finds what was installed beside it before anything in the build tree
tree=$(pwd -P)
ldd "$dir/app" | grep -F "$tree/" && fail "the installed app loads libraries from the build tree"
# uninstall takes back everything install laid out, the libraries copied beside libgcr included
make -s uninstall PREFIX="$dir/usr" BUILD="$b" CUDA="${CUDA:-}" SAN="${SAN:-0}" >/dev/null 2>&1 || fail "make uninstall"
left=$(find "$dir/usr" ! -type d)
[ -z "$left" ] || fail "left after uninstall: $left"
echo "1 passed, 0 failed"
