#!/usr/bin/env bash
# Builds librdkafka 2.8.0 from Debian trixie's source package into PREFIX, for the Docker image's builder stage.
#
# The same steps as scripts/setup.sh's librdkafka part (ENVIRONMENT.md: bookworm's librdkafka-dev is 2.0.2, too
# old), without the rest of setup.sh (PostgreSQL, the tansu broker, moto), which an image build does not need.
# Runs as root, non-interactively. Needs: build-essential pkg-config ca-certificates debian-archive-keyring and the
# -dev packages of librdkafka's dependencies (libssl libsasl2 libzstd liblz4 zlib1g libcurl4-openssl) and
# libvips-dev (for marquee-vips.pc).
#
# Leaves in PREFIX/lib/pkgconfig:
#   rdkafka-static.pc   librdkafka-static.a, with the absolute .a path SwiftPM refuses taken out (as setup.sh does)
#   marquee-vips.pc     libvips' flags without -pthread (the Cvips module's pkgConfig, as setup.sh writes it)
#
# Usage: build-librdkafka.sh PREFIX
set -euo pipefail

prefix="${1:?usage: build-librdkafka.sh PREFIX}"
version=2.8.0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A private apt configuration: the system's sources are left alone.
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/parts" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    > "$work/apt/sources.list"
aptopts=(
    -o "Dir::Etc::SourceList=$work/apt/sources.list"
    -o "Dir::Etc::SourceParts=$work/apt/parts"
    -o "Dir::State::Lists=$work/apt/lists"
    -o "Dir::Cache=$work/apt/cache"
    -o "APT::Sandbox::User=root"
    -qq
)
apt-get "${aptopts[@]}" update
(cd "$work/src" && apt-get "${aptopts[@]}" source --download-only librdkafka)
tarballs=("$work/src/librdkafka_$version".orig.tar.*)
tarball="${tarballs[0]}"

mkdir -p "$work/build"
tar -xf "$tarball" -C "$work/build" --strip-components=1
(
    cd "$work/build"
    ./configure --prefix="$prefix" --install-deps=no --disable-lz4-ext >/dev/null 2>&1 \
        || ./configure --prefix="$prefix" >/dev/null
    make -j"$(nproc)" libs >/dev/null 2>&1
    make install >/dev/null 2>&1
)

pc="$prefix/lib/pkgconfig"
installed=$(PKG_CONFIG_PATH="$pc" pkg-config --modversion rdkafka)
[ "$installed" = "$version" ] || { echo "build-librdkafka: expected $version, got '$installed'" >&2; exit 1; }

# SwiftPM drops the absolute .a path with a "prohibited flag" warning; the module map links -lrdkafka-static.
# shellcheck disable=SC2016 # the pkg-config variables are literal text here
sed -i 's|${pc_sysrootdir}${libdir}/librdkafka.a||' "$pc/rdkafka-static.pc"

# libvips' flags minus -pthread (SwiftPM refuses it), under the name the Cvips module asks for.
cat > "$pc/marquee-vips.pc" <<PC
Name: marquee-vips
Description: libvips $(pkg-config --modversion vips) without -pthread, for SwiftPM (written by deploy/docker/build-librdkafka.sh)
Version: $(pkg-config --modversion vips)
Cflags: $(pkg-config --cflags vips | sed 's/-pthread//g')
Libs: $(pkg-config --libs vips | sed 's/-pthread//g')
PC

# Only the static library is linked; drop the shared objects so nothing can load them by mistake.
rm -f "$prefix"/lib/librdkafka*.so*
echo "librdkafka $installed installed into $prefix" >&2
