#!/usr/bin/env bash
# Writes the man pages of dsekp and of each subcommand from their --help (help2man), gzipped as
# Debian wants them: man-pages.sh DSEKP_BINARY OUT_DIR VERSION.
set -euo pipefail
dsekp="$1" out="$2" version="$3"
mkdir -p "$out"
page() {  # page NAME "COMMAND" "WHAT IT DOES"
  help2man --no-info --no-discard-stderr --version-string="$version" --section=1 \
    --name="$3" --output="$out/$1.1" "$2"
  # A subcommand's page is named dsekp-SUB (man dsekp-edge): its title and NAME line say so.
  if [ "$1" != dsekp ]; then
    sed -i -e "s/^\.TH DSEKP /.TH ${1^^} /" -e "s/^dsekp ${1#dsekp-} \\\\-/$1 \\\\-/" "$out/$1.1"
  fi
  gzip -9n -f "$out/$1.1"
}
page dsekp "$dsekp" "the Dynamic Session Enhanced Key Protocol's edge, devices and tools"
while read -r sub what; do
  page "dsekp-$sub" "$dsekp $sub" "$what"
done <<'LIST'
keys provision devices and broker accounts (the registry)
edge run the edge gateway
device run simulated devices
link emulate a lossy, slow link between two TCP endpoints
experiment run the paper's PSK-vs-DSEKP experiment
analyze analyse the client and server logs of an experiment
bench benchmark the protocol, the edge and the whole path
completion print a shell completion script
LIST
