#!/usr/bin/env bash
# Runs every test (unit and integration) against the local stack. Starts the stack when it is not running
# and stops it again afterwards; leaves a stack it found running alone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

started=0
if ! scripts/stack.sh status >/dev/null 2>&1; then
    scripts/stack.sh up >/dev/null
    started=1
fi
cleanup() { if [ "$started" = 1 ]; then scripts/stack.sh down; fi; }
trap cleanup EXIT

# The house format (.swift-format), checked before anything is built: `swift format -i -r Sources Tests
# Benchmarks Package.swift` applies it.
swift format lint --strict --recursive --parallel Sources Tests Benchmarks Package.swift

# Build everything first (the integration tests start helper executables from .build/debug).
swift build --build-tests
# One framework (Swift Testing), so the closing line tells the truth. At most 12 tests at once: started all
# together, several hundred tests and their child processes starve each other on two cores for the first minute,
# past deadlines that measure nothing of what the tests check; 12 finish the run in the same time.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-12}"
MARQUEE_INTEGRATION=1 swift test --skip-build --disable-xctest "$@"

# The deployment files checked against the sources (scripts/check-deploy.sh), and the fault run's short form
# (scripts/fault-run.sh), after the tests and alone: it freezes the broker and stops PostgreSQL. Both only for a
# whole run, not for a filtered one (`make test` with arguments, or SKIP_FAULT_RUN=1).
if [ "$#" -eq 0 ]; then
    scripts/check-deploy.sh
    if [ "${SKIP_FAULT_RUN:-0}" != 1 ]; then FAULT_SHORT=1 scripts/fault-run.sh; fi
    # The multi-host fault run's short form (scripts/fault-net.sh, about 5 minutes, as root): under CI and on
    # request (FAULT_NET=1; FAULT_NET=0 leaves it out). Where network namespaces cannot be made it says
    # "skipped" and passes (docs/testing.md, "The multi-host fault run").
    if [ "${FAULT_NET:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}" = 1 ]; then FAULT_SHORT=1 scripts/fault-net.sh; fi
fi
