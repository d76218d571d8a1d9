#!/bin/sh
# Fetch Debian's static busybox to $1 without installing the package.
#
#   tools/fetch-busybox.sh DEST
#
# Downloads busybox-static with `apt-get download` into a temporary directory,
# extracts it with `dpkg-deb -x` and copies bin/busybox to DEST. Runs
# `apt-get update` only when the first download fails (fresh machines have no
# package lists). Idempotent: does nothing when DEST is already an executable
# file.
set -eu

if [ $# -ne 1 ]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi
dest=$1
case $dest in
  /*) ;;
  *) dest=$PWD/$dest ;;  # we cd into a temp dir below
esac
if [ -f "$dest" ] && [ -x "$dest" ]; then
  exit 0
fi
if [ -e "$dest" ]; then
  echo "fetch-busybox: $dest exists but is not an executable file" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$tmp"
# `apt-get download` writes into the current directory; as root it warns that
# _apt cannot drop privileges into a directory it cannot read, so open it up.
chmod 755 "$tmp"
if ! apt-get download busybox-static >/dev/null 2>"$tmp/err1"; then
  echo "fetch-busybox: download failed, running apt-get update" >&2
  apt-get update >/dev/null
  if ! apt-get download busybox-static >/dev/null; then
    cat "$tmp/err1" >&2
    echo "fetch-busybox: cannot download busybox-static" >&2
    exit 1
  fi
fi

set -- "$tmp"/busybox-static_*.deb
if [ ! -f "$1" ]; then
  echo "fetch-busybox: no .deb after apt-get download" >&2
  exit 1
fi
dpkg-deb -x "$1" "$tmp/root"
if [ ! -x "$tmp/root/bin/busybox" ]; then
  echo "fetch-busybox: bin/busybox missing from $1" >&2
  exit 1
fi

# Copy to a temporary name beside DEST and rename, so that an interrupted run
# never leaves a truncated DEST that later runs would take as done.
mkdir -p "$(dirname "$dest")"
cp "$tmp/root/bin/busybox" "$dest.tmp.$$"
chmod 755 "$dest.tmp.$$"
mv -f "$dest.tmp.$$" "$dest"
