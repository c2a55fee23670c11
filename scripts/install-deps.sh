#!/usr/bin/env bash
# Installs the Debian 12 packages the build and tests need, only those that are missing.
# Idempotent: a machine that has everything is left untouched (no apt-get update either).
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config binutils ccache
  libssl-dev libmbedtls-dev libjsmn-dev libsimdjson-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libsqlite3-dev mosquitto libmosquitto-dev
  libcsv-dev libboost-math-dev gnuplot-nox
  libcpp-httplib-dev libtomlplusplus-dev
  libspdlog-dev libsystemd-dev
  # the shared session store of several edges (edge/store/redis, tests start their own Redis)
  libhiredis-dev redis-server
  # the TLS tunnel to Redis that SCALING.md describes (hiredis 0.14 has no TLS), tested too
  stunnel4 openssl
  # the edge's AMQP consumer (edge/amqp) and the clustered broker tier it is tested on
  # (tests/broker_compat: three RabbitMQ nodes with the MQTT plugin); nats-server, another
  # clusterable MQTT broker the compatibility tests run on
  librabbitmq-dev rabbitmq-server nats-server
  # the partition tests: Redis and RabbitMQ nodes in network namespaces (tests/support/host_network)
  iproute2
  # libFuzzer smoke runs in `make test` (fuzz/, scripts/fuzz.sh)
  clang-14 libclang-rt-14-dev llvm-14
  clang-format python3
  # microcontroller cross-builds run under QEMU (tests/mcu, docs/FIRMWARE.md)
  gcc-arm-none-eabi picolibc-arm-none-eabi libstdc++-arm-none-eabi-dev
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-arm qemu-system-misc dpkg-dev
  # the Debian package (`make deb`: man pages) and its test (`make test-deb`: lintian, a
  # throwaway Debian root in a namespace of its own)
  help2man lintian debootstrap iproute2 util-linux
  # packaging/prometheus: promtool checks the alert rules, a real Prometheus scrapes a real edge
  prometheus
  # packaging/telegraf and packaging/node-red (tests/packaging/consumers_test.sh): the Telegraf
  # account's view of the broker; Node-RED itself comes from npm
  mosquitto-clients
)
# Node.js and npm for Node-RED, unless a Node.js that brings its own npm is installed
command -v npm >/dev/null || packages+=(nodejs npm)

# --arm64: also the aarch64 cross toolchain, QEMU's user-mode emulator and the arm64 (multiarch)
# libraries the cross build links (scripts/test-arm64.sh). libsimdjson-dev cannot be installed
# for two architectures at once: the host's headers serve both, the arm64 library comes from
# libsimdjson14 (cmake/toolchains/aarch64-linux-gnu.cmake).
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ "${1:-}" = --arm64 ]; then
  arm64_dev=(libssl-dev libmbedtls-dev libsimdjson14 libsqlite3-dev libmosquitto-dev
    libsystemd-dev libhiredis-dev librabbitmq-dev libspdlog-dev libcsv-dev libgtest-dev libgmock-dev
    libbenchmark-dev libboost-math-dev libcpp-httplib-dev libtomlplusplus-dev)
  packages+=(crossbuild-essential-arm64 qemu-user-static file "${arm64_dev[@]/%/:arm64}")
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "install-deps: adding the arm64 architecture (multiarch)"
    $SUDO dpkg --add-architecture arm64  # the arm64 packages are then missing: apt-get update below
  fi
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
