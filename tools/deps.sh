#!/bin/sh
# deps.sh — installs the Debian packages gcr builds against when they are missing
# (uthash-dev, libcjson-dev, a C toolchain). The CUDA toolkit is optional and not installed here.
set -e
need=""
[ -f /usr/include/uthash.h ] || [ -f .deps/include/uthash.h ] || need="$need uthash-dev"
[ -f /usr/include/cjson/cJSON.h ] || [ -f .deps/include/cjson/cJSON.h ] || need="$need libcjson-dev"
command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || need="$need build-essential"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
[ -z "$need" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps: installing$need"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq $need
