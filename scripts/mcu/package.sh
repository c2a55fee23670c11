#!/usr/bin/env bash
# Builds the distributable DSEKP device library: one self-contained folder (and a zip of it) that
# is at once an Arduino library (library.properties, src/, examples/), a PlatformIO library
# (library.json) and an ESP-IDF component (idf_component.yml, CMakeLists.txt). It holds the SDK,
# the protocol core, the mbedTLS backend and jsmn.h (from Debian's libjsmn-dev); mbedTLS itself
# comes from the ESP32 platform. extras/ has the bare-metal mbedTLS configuration and its two
# helper files, which platforms that bring their own mbedTLS do not compile.
#
# Usage: package.sh OUT_DIR [--check MCU_BUILD_DIR]
#   --check: also compile every source of the package for Cortex-M4 (as an Arduino build would:
#   src/ on the include path, C++20, no exceptions or RTTI) against the mbedTLS source tree that
#   scripts/mcu/build.sh fetched into MCU_BUILD_DIR/src, and parse the three manifests.
set -euo pipefail
source "$(dirname "$0")/common.sh"

out=${1:?usage: package.sh OUT_DIR [--check MCU_BUILD_DIR]}
check_build=""
if [ "${2:-}" = --check ]; then check_build=${3:?--check needs the MCU build directory}; fi

version=$(sed -n 's/^version=//p' "$DSEKP_ROOT/firmware/packaging/library.properties")
pkg="$out/DSEKP"
rm -rf "$pkg"
mkdir -p "$pkg/src/dsekp" "$pkg/src/dsekp_core" "$pkg/src/crypto/mbedtls" \
  "$pkg/examples/DSEKP_Client" "$pkg/extras"

cp "$DSEKP_ROOT"/firmware/packaging/{library.properties,library.json,idf_component.yml} "$pkg/"
cp "$DSEKP_ROOT/LICENSE" "$pkg/"
cp "$DSEKP_ROOT/firmware/packaging/CMakeLists.esp-idf.txt" "$pkg/CMakeLists.txt"
cp "$DSEKP_ROOT"/firmware/include/{dsekp_device.h,dsekp_client.h} "$pkg/src/"
cp "$DSEKP_ROOT"/firmware/src/{dsekp_device.cpp,dsekp_client.c} "$pkg/src/"
cp "$DSEKP_ROOT"/include/dsekp/*.hpp "$pkg/src/dsekp/"
cp "$DSEKP_ROOT"/core/*.cpp "$DSEKP_ROOT"/core/*.hpp "$pkg/src/dsekp_core/"
cp "$DSEKP_ROOT"/crypto/mbedtls/mbedtls_crypto.{hpp,cpp} "$pkg/src/crypto/mbedtls/"
cp "$DSEKP_ROOT/crypto/argument_rules.hpp" "$pkg/src/crypto/"
[ -f /usr/include/jsmn.h ] || mcu_die "/usr/include/jsmn.h missing (apt-get install libjsmn-dev)"
cp /usr/include/jsmn.h "$pkg/src/"
cp "$DSEKP_ROOT/firmware/examples/DSEKP_Client/DSEKP_Client.ino" "$pkg/examples/DSEKP_Client/"
cp "$DSEKP_ROOT/firmware/config/dsekp_mbedtls_config.h" \
  "$DSEKP_ROOT"/firmware/src/{dsekp_mbedtls_pool.c,dsekp_mbedtls_aes_nodec.c} \
  "$DSEKP_ROOT/firmware/include/dsekp_mbedtls_pool.h" "$pkg/extras/"
cat >"$pkg/README.md" <<EOF
# DSEKP device SDK $version

Arduino library, PlatformIO library and ESP-IDF component in one folder. Start with
\`src/dsekp_client.h\` and \`examples/DSEKP_Client\`; the integration guide, footprint and costs
are in the DSEKP repository's docs/FIRMWARE.md. Needs C++20 (Arduino-ESP32 3.x, ESP-IDF 5.1+).
\`extras/\` is for bare-metal builds with their own mbedTLS (see docs/FIRMWARE.md).
EOF
(cd "$out" && rm -f "DSEKP-$version.zip" && python3 -m zipfile -c "DSEKP-$version.zip" DSEKP >/dev/null)
echo "package: $pkg ($out/DSEKP-$version.zip)"

[ -n "$check_build" ] || exit 0

# --- check ---------------------------------------------------------------------------------------
mcu_require_toolchain cortex-m4
mbedtls_src=$(ls -d "$check_build"/src/mbedtls-*/ 2>/dev/null | head -n1)
[ -n "$mbedtls_src" ] && [ -f "$mbedtls_src/include/mbedtls/gcm.h" ] ||
  mcu_die "no mbedTLS source tree under $check_build/src (run scripts/mcu/build.sh first)"
python3 - "$pkg" <<'EOF' || mcu_die "a package manifest is invalid"
import json, os, sys
pkg = sys.argv[1]
props = dict(l.split("=", 1) for l in open(os.path.join(pkg, "library.properties")).read().splitlines() if "=" in l)
for key in ("name", "version", "author", "maintainer", "sentence", "paragraph", "category", "url", "architectures", "license"):
    assert props.get(key), "library.properties: %s missing" % key
# The library needs nothing but the platform; PubSubClient and DHT are the example's.
assert "depends" not in props, "library.properties: the library itself depends on nothing"
lib = json.load(open(os.path.join(pkg, "library.json")))
assert lib["name"] == props["name"] and lib["version"] == props["version"], "library.json disagrees"
assert lib["license"] == props["license"] == "Apache-2.0", "the licenses disagree"
assert lib["repository"]["url"] and lib["authors"] and lib["dependencies"] == {}, "library.json fields"
assert os.path.exists(os.path.join(pkg, "LICENSE")), "LICENSE missing"
for ex in lib["examples"]:
    for f in ex["files"]:
        assert os.path.exists(os.path.join(pkg, ex["base"], f)), "example file missing: " + f
yml = open(os.path.join(pkg, "idf_component.yml")).read()
try:
    import yaml
    doc = yaml.safe_load(yml)
    assert doc["version"] == props["version"] and "idf" in doc["dependencies"], "idf_component.yml"
    assert doc["license"] == "Apache-2.0" and doc["repository"], "idf_component.yml fields"
except ImportError:
    assert 'version: "%s"' % props["version"] in yml and "dependencies:" in yml, "idf_component.yml"
print("package: manifests agree on %s %s" % (props["name"], props["version"]))
EOF
objdir=$(mktemp -d)
trap 'rm -rf "$objdir"' EXIT
flags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=soft --specs=picolibc.specs -Os -ffunction-sections
  -fdata-sections -Wall -I"$pkg/src" -I"$pkg/extras"
  -isystem "$mbedtls_src/include" -DMBEDTLS_CONFIG_FILE='"dsekp_mbedtls_config.h"')
count=0
while IFS= read -r -d '' source; do
  case "$source" in
    *.c) arm-none-eabi-gcc -std=c11 -Werror=implicit-function-declaration "${flags[@]}" -c \
           "$source" -o "$objdir/$count.o" ;;
    *.cpp) arm-none-eabi-g++ -std=c++20 -fno-exceptions -fno-rtti "${flags[@]}" -c "$source" \
             -o "$objdir/$count.o" ;;
  esac || mcu_die "package source does not compile: ${source#"$pkg"/}"
  count=$((count + 1))
done < <(find "$pkg/src" "$pkg/extras" \( -name '*.c' -o -name '*.cpp' \) -print0 | sort -z)
echo "package: all $count sources of the package compile for cortex-m4"
