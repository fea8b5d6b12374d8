#!/bin/sh
# check_samples.sh — the samples refuse bad command lines before doing any work: exit status 2 and
# a message saying what was wrong (an unknown option is named as one, also when it comes last); a
# list value is read whole, never cut to a buffer.
b=${BUILD:-build}
pass=0; fail=0
# expect PROG WANT-SUBSTRING ARGS...
expect() {
  p=$1; want=$2; shift 2
  if [ ! -x "$b/bin/$p" ]; then echo "FAIL: $b/bin/$p missing"; fail=$((fail+1)); return; fi
  err=$("$b/bin/$p" "$@" 2>&1 >/dev/null); rc=$?
  case "$err" in
    *"$want"*) if [ $rc -eq 2 ]; then pass=$((pass+1)); return; fi ;;
  esac
  echo "FAIL: $p $*: want exit 2 and '$want', got exit $rc: $err"; fail=$((fail+1))
}
for p in mobilenet_v3 resnet50 mobilenet_v2; do
  expect $p "unknown option --bogus" --bogus
  expect $p "unknown option --bogus" --bogus 1
  expect $p "unknown option --bogus" --batch 1 --bogus
  expect $p "--batch needs a value" --batch
  expect $p "--width needs a value" --width
  expect $p "bad value '0' for --batch" --batch 0
done
expect mobilenet_v3 "--model needs a value" --model
expect mobilenet_v3 "unknown option --layers" --layers
expect resnet50 "--layers needs a value" --layers
expect resnet50 "unknown option --model" --model
expect mobilenet_v2 "unknown option --model" --model
# a second mode past the 64-byte buffer: the unknown one must be refused, not cut off unread
commas=$(printf '%0100d' 0 | tr 0 ,)
for p in mobilenet_v3 resnet50 mobilenet_v2; do
  expect $p "for --modes" --modes "eager${commas},nope"
done
expect resnet50 "for --layers" --layers "1,1,1,1${commas},9"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
