#!/usr/bin/env bash
# Fetches the source of the Debian mbedtls package (the version the host has installed, so the
# host and the MCU builds run the same mbedTLS) and unpacks it, Debian patches applied, for the
# MCU cross builds. apt needs a deb-src entry for that: this script adds one itself, made from
# the machine's own `deb` entries (same mirrors and suites), in its own file under
# /etc/apt/sources.list.d/, then runs apt-get update once. Needs root (or sudo) only when it has
# to add the entry or download; an already unpacked tree is reused.
#
# Usage: fetch-mbedtls.sh DEST_DIR     prints the path of the unpacked source tree on stdout.
# DSEKP_MBEDTLS_SRC=/path/to/mbedtls-2.28.x skips all of it and uses that tree.
set -euo pipefail

log() { echo "fetch-mbedtls: $*" >&2; }
die() { log "error: $*"; exit 1; }

dest=${1:?usage: fetch-mbedtls.sh DEST_DIR}

if [ -n "${DSEKP_MBEDTLS_SRC:-}" ]; then
  [ -f "$DSEKP_MBEDTLS_SRC/library/gcm.c" ] || die "DSEKP_MBEDTLS_SRC=$DSEKP_MBEDTLS_SRC has no library/gcm.c"
  echo "$DSEKP_MBEDTLS_SRC"
  exit 0
fi

# The host's own architecture: with an arm64 cross toolchain libmbedtls-dev:arm64 is there too.
version=$(dpkg-query -W -f='${Version}' "libmbedtls-dev:$(dpkg --print-architecture)" 2>/dev/null || true)
[ -n "$version" ] || die "libmbedtls-dev is not installed (make deps installs it); its version selects the source"
upstream=${version#*:}
upstream=${upstream%-*}
tree="$dest/mbedtls-$upstream"

mkdir -p "$dest"
exec 9>"$dest/.fetch.lock"
flock 9  # two build directories fetching at once must not unpack over each other

if [ -f "$tree/library/gcm.c" ] && [ -f "$tree/.dsekp-fetched" ]; then
  echo "$tree"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
command -v dpkg-source >/dev/null || die "dpkg-source is missing (Debian package dpkg-dev) to unpack the source package"

has_source() { apt-cache showsrc mbedtls 2>/dev/null | grep -q "^Version: $version\$"; }

if ! has_source; then
  entry=/etc/apt/sources.list.d/dsekp-deb-src.sources
  if [ ! -f "$entry" ]; then
    # Every enabled deb822 stanza of type `deb` again as `deb-src`, and every one-line `deb` entry.
    generated=$(mktemp)
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      [ "$f" = "$entry" ] && continue
      awk 'BEGIN { RS = ""; ORS = "\n\n" }
           /(^|\n)Types:[ \t]*deb([ \t]|\n|$)/ && !/(^|\n)Enabled:[ \t]*no/ {
             sub(/Types:[ \t]*deb[ \t]*deb-src/, "Types: deb"); sub(/Types:[ \t]*deb/, "Types: deb-src"); print }' "$f" >>"$generated"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      sed -n 's/^[ \t]*deb[ \t]\+/deb-src /p' "$f" | grep -v '^#' >>"$generated.list" || true
    done
    if [ -s "$generated.list" ]; then
      $SUDO install -m 0644 "$generated.list" /etc/apt/sources.list.d/dsekp-deb-src.list
    fi
    [ -s "$generated" ] || [ -s "$generated.list" ] || die "no 'deb' entry found in /etc/apt to derive a deb-src entry from"
    if [ -s "$generated" ]; then $SUDO install -m 0644 "$generated" "$entry"; fi
    rm -f "$generated" "$generated.list"
    log "added deb-src entries under /etc/apt/sources.list.d/ (dsekp-deb-src.*)"
  fi
  log "apt-get update (to read the source package lists)"
  $SUDO apt-get update -q >&2 || die "apt-get update failed"
  has_source || die "the source of mbedtls $version is not in the package lists (apt-cache showsrc mbedtls)"
fi

work=$(mktemp -d "$dest/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
log "apt-get source mbedtls=$version"
(cd "$work" && apt-get source -q "mbedtls=$version" >&2) || die "apt-get source mbedtls=$version failed"
unpacked=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'mbedtls-*' | head -n1)
[ -n "$unpacked" ] && [ -f "$unpacked/library/gcm.c" ] || die "the unpacked source has no library/gcm.c"
rm -rf "$tree"
mv "$unpacked" "$tree"
echo "$version" >"$tree/.dsekp-fetched"
echo "$tree"
