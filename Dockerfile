# syntax=docker/dockerfile:1
#
# One image holding every Marquee executable: marquee (the operator CLI), marquee-fetch, marquee-images,
# marquee-index, marquee-producer (once its target is in Package.swift) and marquee-upstream (the emulator).
#
#   docker build -t marquee:dev .
#   docker run --rm marquee:dev                      # marquee --help
#   docker run --rm marquee:dev marquee-fetch --help
#
# Stages: `librdkafka` builds librdkafka 2.8.0 from Debian trixie's source (bookworm's 2.0.2 is too old, see
# ENVIRONMENT.md), `build` compiles the executables in release mode with the Swift standard library and Foundation
# linked statically, and the runtime is debian:bookworm-slim with only the shared libraries the binaries load:
# libcurl, libvips, SQLite, jemalloc and the libraries librdkafka's static archive calls (OpenSSL, SASL, zstd, lz4,
# zlib).
# librdkafka itself is linked statically (Sources/Crdkafka links rdkafka-static), so it is not installed.
#
# docs/deploy.md says what of this was checked without a Docker engine, and what was not.

ARG SWIFT_IMAGE=swift:6.3.1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# --- librdkafka 2.8.0, static ---------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS librdkafka
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        build-essential pkg-config ca-certificates debian-archive-keyring \
        libssl-dev libsasl2-dev libzstd-dev liblz4-dev zlib1g-dev libcurl4-openssl-dev \
        libvips-dev libsqlite3-dev libjemalloc-dev \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/docker/build-librdkafka.sh /usr/local/bin/build-librdkafka.sh
RUN build-librdkafka.sh /opt/rdkafka

# --- the executables ------------------------------------------------------------------------------------------
FROM librdkafka AS build
ENV PKG_CONFIG_PATH=/opt/rdkafka/lib/pkgconfig
WORKDIR /src
# Package.resolved is git-ignored: the versions are resolved here from the manifest's ranges. The build folder is
# a BuildKit cache mount, so dependency checkouts and objects are reused from one image build to the next.
COPY . .
# Every executable product whose name starts with marquee. `--static-swift-stdlib` links the Swift runtime,
# Foundation and Dispatch into each binary; the system libraries stay shared (installed in the runtime stage).
# Stripped: about 80 MB each instead of 150-190 MB (the debug information; crash backtraces show addresses only).
RUN --mount=type=cache,target=/src/.build,id=marquee-swiftpm \
    set -eu; \
    mkdir -p /out; \
    products=$(sed -n 's/.*\.executable(name: "\(marquee[a-z-]*\)".*/\1/p' Package.swift); \
    for product in $products; do \
        swift build -c release --static-swift-stdlib --product "$product"; \
    done; \
    bin=$(swift build -c release --static-swift-stdlib --show-bin-path); \
    for product in $products; do install -m 0755 "$bin/$product" /out/ && strip "/out/$product"; done; \
    ls -l /out

# --- runtime --------------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime
# libcurl4 (HTTP client, S3), libvips42 (image worker, emulator), libsqlite3-0 (the embedded store), libjemalloc2
# (marquee-fetch's malloc), and what the static librdkafka calls: libssl3, libsasl2-2, libzstd1, liblz4-1, zlib1g.
# tini reaps and forwards signals, so SIGTERM reaches the worker and its graceful shutdown runs. curl (a few hundred
# KB over libcurl4) is for the compose file's health checks against /readyz.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates tini tzdata curl \
        libcurl4 libvips42 libsqlite3-0 libjemalloc2 \
        libssl3 libsasl2-2 libzstd1 liblz4-1 zlib1g \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 marquee \
    && useradd --system --uid 10001 --gid marquee --home-dir /var/lib/marquee --shell /usr/sbin/nologin marquee \
    && install -d -o marquee -g marquee -m 0750 /var/lib/marquee /var/lib/marquee/var

COPY --from=build /out/ /usr/local/bin/

# The working directory holds the defaults' relative paths (sqlite:./var/marquee.db, file://./var/images) for a
# one-container run; the compose file and the Kubernetes manifests point the workers at PostgreSQL and S3.
WORKDIR /var/lib/marquee
USER 10001:10001

# Workers listen on their metrics address only when told; in a container it must not be loopback.
# 9101 fetch, 9102 images, 9103 index, 9104 producer, 8930 the emulator.
EXPOSE 9101 9102 9103 9104 8930

ENTRYPOINT ["tini", "--"]
CMD ["marquee", "--help"]
