#!/usr/bin/env bash
# Installs the system tools the tests (and, with "bench" or "scale", the benchmarks)
# need, from Debian's packages, when they are missing: chromium (the OAuth browser test),
# node and npm (dynalite, the Swagger UI of /docs), PostgreSQL, PgBouncer (the stand-in
# for RDS Proxy: the pooler's test and make bench-scale), and for make bench
# libvips' vipsthumbnail (the image pipeline's reference) and vips (progressive JPEG,
# CMYK JPEG and WebP files for the decoder peak table), and wrk (the cdn route beside a
# trivial server), and nginx (the caching proxy of make bench-edge, infra/tests/edgecache, and
# of the cross-origin browser test). Needs root for apt-get; otherwise it says what to install.
set -euo pipefail
# Usage: tools.sh run|test|bench|scale|edge|hugepages

# hugepages (make bench-scale): reserve huge pages for PostgreSQL's shared memory, as
# RDS does by default on its larger instance classes. Without them a new backend's first
# touch of each 4 kB page of the shared buffers is a page fault, and on a VM those cost
# enough to triple a fresh connection's first query. The server's default huge_pages=try
# takes them when they are there. Prints, on stdout, the command that gives the
# reservation back (the caller runs it at the end); messages go to stderr.
if [ "${1:-}" = hugepages ]; then
	want=96 # 2 MB each: 128 MB of shared buffers and the rest of the shared memory
	f=/proc/sys/vm/nr_hugepages
	if [ ! -w "$f" ]; then
		echo "tools: cannot reserve huge pages (needs root on Linux); the fresh-connection figures include page faults" >&2
		echo ":"
		exit 0
	fi
	have=$(cat "$f")
	if [ "$have" -ge "$want" ]; then
		echo ":"
		exit 0
	fi
	echo "$want" >"$f"
	echo "tools: reserved huge pages for PostgreSQL (vm.nr_hugepages $have -> $(cat "$f")), given back at the end" >&2
	echo "echo $have >$f"
	exit 0
fi

need=()
need_pgbouncer() { command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer); }
need_nginx() { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx); }
case "${1:-test}" in
test)
	command -v chromium >/dev/null 2>&1 || need+=(chromium)
	need_pgbouncer
	need_nginx
	;;
edge) need_nginx ;;
bench)
	{ command -v vipsthumbnail && command -v vips; } >/dev/null 2>&1 || need+=(libvips-tools)
	command -v wrk >/dev/null 2>&1 || need+=(wrk)
	;;
scale) need_pgbouncer ;;
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
