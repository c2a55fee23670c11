#!/usr/bin/env bash
# The bash completion `dsekp completion bash` prints (installed by the package): sourced into
# bash, it completes subcommands at every level and each subcommand's own options.
# Usage: completion_test.sh DSEKP_BINARY
set -euo pipefail
script=$(mktemp)
trap 'rm -f "$script"' EXIT
"$1" completion bash >"$script"
source "$script"
complete -p dsekp >/dev/null

completions() {  # completions WORD... : what bash offers for the last word
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _dsekp
  echo "${COMPREPLY[*]}"
}
expect() {  # expect "OFFERED" WORD...
  local want=$1
  shift
  local got
  got=$(completions "$@")
  [ "$got" = "$want" ] || { echo "FAIL: '$*' completes to '$got', expected '$want'"; exit 1; }
}
expect "keys" dsekp ke
expect "edge experiment" dsekp e
expect "broker-config broker-sync" dsekp keys bro
expect "--broker" dsekp edge --bro
expect "--db" dsekp keys add --d
expect "add remove show list --help -h" dsekp keys account ""
expect "--shared-group" dsekp edge --shared
# After an option's value the subcommand's options are offered still.
expect "--logs-dir" dsekp edge --broker 127.0.0.1:1883 --logs
echo "completion: passed"
