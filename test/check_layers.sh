#!/bin/sh
# check_layers.sh — dependencies run one way: include/ <- lib/ (lib/cuda/ included) <- capture/ <-
# replay/, and everything that knows CUDA (its headers, lib/cuda/'s) is under lib/cuda/. A quoted
# #include in lib/, capture/ or replay/ is resolved against the including file's folder, then
# against include/ and lib/ (the compiler's -I paths); it fails when it lands in a higher layer than
# the file, or in lib/cuda/ from outside it (so does a CUDA system header there). Then the built objects ($BUILD/obj): one of lib/ or capture/ fails
# when it uses a symbol that an object of a higher layer defines. Each finding is printed.
rank() { # the layer of a path relative to the repository root: 0 include, 1 lib, 2 capture, 3 replay
  case $1 in include/*) echo 0 ;; lib/*) echo 1 ;; capture/*) echo 2 ;; replay/*) echo 3 ;; *) echo -1 ;; esac
}
root=$(pwd)
pass=0; fail=0
for f in $(find lib capture replay -type f \( -name '*.c' -o -name '*.h' -o -name '*.cuh' -o -name '*.cu' \) | sort); do
  own=$(rank "$f")
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    p=$(realpath -m "$(dirname "$f")/$inc")
    [ -e "$p" ] || p=$(realpath -m "include/$inc")
    [ -e "$p" ] || p=$(realpath -m "lib/$inc")
    rel=${p#"$root"/}
    to=$(rank "$rel")
    if [ "$to" -gt "$own" ]; then
      echo "FAIL $f: #include \"$inc\" ($rel, layer $to above the file's layer $own)"; fail=$((fail+1))
    fi
    case $f:$rel in lib/cuda/*) ;; *:lib/cuda/*) echo "FAIL $f: #include \"$inc\" (CUDA code lives under lib/cuda/)"; fail=$((fail+1)) ;; esac
  done
  case $f in lib/cuda/*) ;; *)
    if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(cuda|nvrtc|cublas|cudnn)[^>]*>' "$f"; then
      echo "FAIL $f: includes a CUDA header outside lib/cuda/"; fail=$((fail+1))
    fi ;;
  esac
done
[ "$fail" -eq 0 ] && { echo "lib/ capture/ replay/ include only their own layer or lower ones, and CUDA only under lib/cuda/"; pass=1; }
# The same rule on the built objects, which catches a call up through a declaration that a lower
# header carries (lib/internal.h declared capture's hooks).
obj=${BUILD:-build}/obj
if [ -d "$obj/lib" ] && [ -d "$obj/capture" ] && [ -d "$obj/replay" ]; then
  before=$fail; tmp=$(mktemp)
  # objects of sources since removed (or moved to another layer) are left out on both sides
  live() { find "$@" -name '*.o' | sort | while read -r o; do s=${o#"$obj"/}; [ -f "${s%.o}.c" ] && echo "$o"; done; }
  defs() { live "$@" | xargs -r nm --defined-only 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}' | sort -u; }
  for low in lib capture; do
    case $low in lib) high="$obj/capture $obj/replay" ;; capture) high="$obj/replay" ;; esac
    defs $high > "$tmp"
    for o in $(live "$obj/$low"); do
      up=$(nm --undefined-only "$o" | awk '{print $NF}' | sort -u | comm -12 - "$tmp")
      if [ -n "$up" ]; then echo "FAIL ${o#"$obj"/} uses a higher layer's" $up; fail=$((fail+1)); fi
    done
  done
  rm -f "$tmp"
  [ "$fail" -eq "$before" ] && { echo "no object of lib/ or capture/ uses a symbol of a higher layer"; pass=$((pass+1)); }
else
  echo "FAIL: $obj has no lib/, capture/ and replay/ objects (build first)"; fail=$((fail+1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
