#!/usr/bin/env bash
# Installs the system tools the tests (and, with "bench", the benchmarks) need, from
# Debian's packages, when they are missing: chromium (the OAuth browser test), node and
# npm (dynalite, the Swagger UI of /docs), PostgreSQL, and for the benchmarks vipsthumbnail (the image
# pipeline's reference). Needs root for apt-get; otherwise it says what to install.
set -euo pipefail
# Usage: tools.sh run|test|bench
need=()
case "${1:-test}" in
test) command -v chromium >/dev/null 2>&1 || need+=(chromium) ;;
bench) command -v vipsthumbnail >/dev/null 2>&1 || need+=(libvips-tools) ;;
esac
command -v node >/dev/null 2>&1 || need+=(nodejs npm)
command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "tools: please install: ${need[*]} (apt-get install ${need[*]})" >&2
	exit 1
fi
echo "tools: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "${need[@]}" >/dev/null
