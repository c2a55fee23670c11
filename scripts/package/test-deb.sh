#!/usr/bin/env bash
# The Debian package, tested the way an operator uses it: lintian on the .deb, then installed with
# apt into a throwaway Debian 12 root (debootstrap --variant=minbase, kept as a tarball in
# /var/cache/dsekp so later runs skip the download), and in that root, in a network namespace of
# its own (its own loopback): the documented set-up (docs/EDGE.md, "Install from the Debian
# package") with the installed binary, config, user and directories, a real Mosquitto from
# Debian, `dsekp device` sending frames that the edge must log; then remove (conffile kept) and
# purge (everything gone). Needs root.
#
# Usage: test-deb.sh DEB_FILE
set -euo pipefail
deb=$(realpath "${1:?usage: test-deb.sh DEB_FILE}")
log() { echo "test-deb: $*"; }
die() { echo "test-deb: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, unshare)"

# --- lintian -------------------------------------------------------------------------------------
log "lintian $(basename "$deb")"
# No tag is overridden: the package has none (info tags included).
lintian_ok=true
report=$(lintian --fail-on error,warning,info --info "$deb" 2>&1) || lintian_ok=false
grep -v 'running with root privileges' <<<"$report" || true
$lintian_ok || die "lintian reports tags (above)"

# --- the throwaway root --------------------------------------------------------------------------
cache=/var/cache/dsekp
tarball=$cache/bookworm-minbase.tar.gz
mirror=${DSEKP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
  log "debootstrap bookworm (minbase) from $mirror, once: $tarball"
  debootstrap --variant=minbase --make-tarball="$tarball.tmp" bookworm "$cache/make-tarball" \
    "$mirror" >"$cache/debootstrap.log" 2>&1 || die "debootstrap: see $cache/debootstrap.log"
  mv "$tarball.tmp" "$tarball"
  rm -rf "$cache/make-tarball"
fi
root=$(mktemp -d /var/tmp/dsekp-deb-root.XXXXXX)
chmod 0755 "$root"  # the root directory of the root: every user must traverse it
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
log "unpacking the root into $root"
debootstrap --variant=minbase --unpack-tarball="$tarball" bookworm "$root" "$mirror" \
  >"$root.debootstrap.log" 2>&1 || die "debootstrap --unpack-tarball: see $root.debootstrap.log"
rm -f "$root.debootstrap.log"
for fs in proc dev; do
  mount --bind "/$fs" "$root/$fs"
  mounted+=("$root/$fs")
done
# The host's package sources (with the security suite: the package's dependencies are as new as
# the libraries it was built against).
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

# --- install -------------------------------------------------------------------------------------
cp "$deb" "$root/tmp/"
log "apt-get install ./$(basename "$deb") mosquitto (in the root)"
in_root apt-get update -q >"$root/tmp/apt.log" 2>&1 || die "apt-get update in the root"
DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -q --no-install-recommends \
  "/tmp/$(basename "$deb")" mosquitto >>"$root/tmp/apt.log" 2>&1 ||
  { tail -30 "$root/tmp/apt.log"; die "apt-get install"; }

check() { "$@" || die "check failed: $*"; }
check test -x "$root/usr/bin/dsekp"
check in_root getent passwd dsekp
check test "$(in_root stat -c '%U %a' /var/lib/dsekp)" = "dsekp 700"
# The CSV logs hold the readings in clear: not for group adm.
check test "$(in_root stat -c '%U %G %a' /var/log/dsekp)" = "dsekp dsekp 750"
check grep -q '^ /etc/dsekp/edge.toml ' <(in_root dpkg-query -W -f='${Conffiles}\n' dsekp)
# It may hold the broker password: root:dsekp 0640 in a root:dsekp 0750 directory.
check test "$(in_root stat -c '%U %G %a' /etc/dsekp/edge.toml)" = "root dsekp 640"
check test "$(in_root stat -c '%U %G %a' /etc/dsekp)" = "root dsekp 750"
check test -s "$root/usr/share/man/man1/dsekp-edge.1.gz"
check grep -q 'completion' "$root/usr/share/bash-completion/completions/dsekp"
check grep -q '^Type=notify' "$root/usr/lib/systemd/system/dsekp-edge.service"
log "installed: binary, user, directories, conffile, man pages, completion, unit"

# --- run it (as docs/EDGE.md says), on a loopback of its own --------------------------------------
cat >"$root/tmp/run.sh" <<'RUN'
set -eu
as_dsekp() { runuser -u dsekp -- "$@"; }
cd /root
# docs/EDGE.md, "Install from the Debian package", steps 2-4, as written there (`sudo -u dsekp`
# is runuser here; systemctl restart mosquitto is the broker started by hand below).
as_dsekp dsekp keys add pi-01 --db /var/lib/dsekp/edge.db --broker 127.0.0.1:1883 >pi-01.json
as_dsekp dsekp keys broker-config --db /var/lib/dsekp/edge.db --out-dir /var/lib/dsekp/broker \
  --edge-user edge >dsekp-broker.conf
sh -c 'install -o mosquitto -m 0600 -D -t /etc/mosquitto/dsekp /var/lib/dsekp/broker/passwd /var/lib/dsekp/broker/acl && { echo "listener 1883"; sed "s|/var/lib/dsekp/broker|/etc/mosquitto/dsekp|" dsekp-broker.conf; } > /etc/mosquitto/conf.d/dsekp.conf'
# What the units' RuntimeDirectory= make (no systemd in this root).
install -d -o mosquitto -m 0755 /run/mosquitto
install -d -o dsekp -g dsekp -m 0755 /run/dsekp
mosquitto -c /etc/mosquitto/mosquitto.conf >/tmp/mosquitto.out 2>&1 &
listening() { (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null; }
for i in $(seq 100); do listening && break; sleep 0.1; done
listening || { cat /tmp/mosquitto.out /var/log/mosquitto/mosquitto.log; echo "mosquitto not up"; exit 1; }
# As the unit runs it: user dsekp (setpriv execs the edge itself, so the signals reach it).
setpriv --reuid=dsekp --regid=dsekp --init-groups /usr/bin/dsekp edge --config /etc/dsekp/edge.toml \
  2>/tmp/edge.err &
edge=$!
for i in $(seq 200); do [ -f /run/dsekp/ready ] && break; sleep 0.1; done
[ -f /run/dsekp/ready ] || { cat /tmp/edge.err /var/log/mosquitto/mosquitto.log; echo "edge not ready"; exit 1; }
dsekp device --mode dsekp --credentials pi-01.json --broker 127.0.0.1:1883 --count 5 --interval-ms 50 \
  --logs-dir /tmp/client-logs --progress off >/tmp/device.out 2>&1 || { cat /tmp/device.out; exit 1; }
for i in $(seq 50); do
  [ "$(grep -c pi-01 /var/log/dsekp/server_logs_dsekp.csv 2>/dev/null)" = 5 ] && break
  sleep 0.1
done
kill -TERM "$edge"
status=0
wait "$edge" || status=$?
[ "$status" = 0 ] || { cat /tmp/edge.err; echo "edge exit status $status"; exit 1; }
rows=$(grep -c pi-01 /var/log/dsekp/server_logs_dsekp.csv)
[ "$rows" = 5 ] || { cat /tmp/edge.err; echo "server log has $rows rows of pi-01, not 5"; exit 1; }
echo "run: 5 frames of pi-01 in /var/log/dsekp/server_logs_dsekp.csv"
RUN
log "running the installed edge against Mosquitto in the root (own network namespace)"
# A network, mount and pid namespace of its own: its loopback is free, and every process it
# started (the broker, an edge left by a failed step) ends with it.
unshare --net --mount --pid --fork sh -c "ip link set lo up && mount -t proc proc '$root/proc' &&
  chroot '$root' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash /tmp/run.sh" ||
  die "the installed edge did not work"

# --- remove, purge -------------------------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive in_root apt-get remove -y -q dsekp >>"$root/tmp/apt.log" 2>&1 || die "apt-get remove"
check test ! -e "$root/usr/bin/dsekp"
check test -f "$root/etc/dsekp/edge.toml"  # a conffile stays until purge
DEBIAN_FRONTEND=noninteractive in_root apt-get purge -y -q dsekp >>"$root/tmp/apt.log" 2>&1 || die "apt-get purge"
for gone in /etc/dsekp /var/lib/dsekp /var/log/dsekp /usr/lib/systemd/system/dsekp-edge.service; do
  check test ! -e "$root$gone"
done
check test -z "$(in_root dpkg-query -W -f='${db:Status-Abbrev}' dsekp 2>/dev/null)"
check test -z "$(in_root dpkg-statoverride --list '/etc/dsekp*')"
log "removed (conffile kept) and purged (config, state and logs gone)"
echo "test-deb: passed"
