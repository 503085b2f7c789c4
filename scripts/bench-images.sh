#!/usr/bin/env bash
# `make bench-images`: posters per second of the image worker's imaging path (MarqueeImaging, through
# Benchmarks/ImagingBenchmark) against vipsthumbnail and ImageMagick's `convert -thumbnail`, on the same
# generated 2000×3000 JPEG originals, in the same run, each making the four default WebP variants (widths 92,
# 185, 342, 500; quality 80; metadata stripped). See BENCHMARKS.md.
#
# All three use every core: the Swift processor its own pool (one thread per core, one image per thread);
# vipsthumbnail and convert run as one process per core (xargs -P) with their own threading at one thread
# (VIPS_CONCURRENCY=1, MAGICK_THREAD_LIMIT=1). vipsthumbnail takes one size per invocation, so it runs once per
# width over the inputs (and decodes each original once per width); convert decodes each original once and makes
# the four widths from clones of it (`+clone -thumbnail Wx -write …`), the cheapest way to drive it.
#
# Each round runs the three (order rotating); the summary's ratios are the medians of the rounds' ratios
# (Swift ÷ other, posters/s), the rates each one's median. Peak RSS is the Swift process's VmHWM at the default
# concurrency.
#
# Environment: BENCH_COUNT (30 originals), BENCH_ROUNDS (3), BENCH_THREADS (default: the core count), BENCH_BIN
# (an ImagingBenchmark built elsewhere, e.g. from an earlier commit, measured instead of building this tree's).
# The last line is machine-readable:
#   bench-images: vips_ratio=… magick_ratio=… swift_per_sec=… vips_per_sec=… magick_per_sec=… peak_rss_mb=…
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PKG_CONFIG_PATH="$root/.deps/rdkafka/lib/pkgconfig"

count="${BENCH_COUNT:-30}"
rounds="${BENCH_ROUNDS:-3}"
cores="$(nproc)"
threads="${BENCH_THREADS:-$cores}"
scratch="$root/.build-release"
bench="${BENCH_BIN:-$scratch/release/ImagingBenchmark}"
work="$root/var/bench-images"
input="$work/input-$count"
convert=/usr/bin/convert   # /usr/local/bin/convert may be a stand-in: always Debian's ImageMagick
widths=(92 185 342 500)

say() { printf '\033[1mbench-images:\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ "$count" =~ ^[1-9][0-9]*$ ]] || die "BENCH_COUNT must be a positive number"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive number"
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS must be a positive number"

# The comparison tools are this benchmark's own needs (not the project's build): install them here.
missing=()
command -v vipsthumbnail >/dev/null 2>&1 || missing+=(libvips-tools)
[ -x "$convert" ] || missing+=(imagemagick)
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; } \
        || die "could not install ${missing[*]}"
fi
"$convert" -list format 2>/dev/null | grep -q '^ *WEBP' || die "$convert cannot write WebP"

mkdir -p "$work"
if [ -n "${BENCH_BIN:-}" ]; then
    [ -x "$bench" ] || die "BENCH_BIN=$bench is not an executable"
    say "measuring $bench (BENCH_BIN: not built from this tree)"
else
    say "building ImagingBenchmark (release, scratch path .build-release)"
    if ! swift build -c release --scratch-path "$scratch" --product ImagingBenchmark >"$work/build.log" 2>&1; then
        tail -n 40 "$work/build.log" >&2
        die "the build failed; see var/bench-images/build.log"
    fi
fi

if [ "$(find "$input" -name '*.jpg' 2>/dev/null | wc -l)" != "$count" ]; then
    say "generating $count 2000×3000 JPEG originals in ${input#"$root"/}"
    rm -rf "$input"
    "$bench" generate --out "$input" --count "$count" >"$work/generate.log"
fi
say "inputs: $(cat "$work/generate.log" 2>/dev/null || echo "$count files")"

now_ns() { date +%s%N; }
per_sec() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.2f", n / (ns / 1e9) }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
check_outputs() { # dir tool
    local made
    made=$(find "$1" -name '*.webp' | wc -l)
    [ "$made" = $((count * ${#widths[@]})) ] || die "$2 wrote $made WebP files, expected $((count * ${#widths[@]}))"
}

run_swift() { # log → posters/s
    local out="$work/out-swift"
    rm -rf "$out"
    "$bench" run --input "$input" --out "$out" --threads "$threads" >"$1" 2>&1 || die "ImagingBenchmark failed; see $1"
    check_outputs "$out" ImagingBenchmark
    grep -oE 'posters_per_sec=[0-9.]+' "$1" | cut -d= -f2
}

run_vips() {
    local out="$work/out-vips" start end chunk
    rm -rf "$out" && mkdir -p "$out"
    chunk=$(((count + cores - 1) / cores))
    start=$(now_ns)
    for width in "${widths[@]}"; do
        find "$input" -name '*.jpg' -print0 | sort -z \
            | VIPS_CONCURRENCY=1 xargs -0 -P "$cores" -n "$chunk" \
                vipsthumbnail --size "${width}x" -o "$out/%s_${width}.webp[Q=80,strip]" \
            || die "vipsthumbnail failed"
    done
    end=$(now_ns)
    check_outputs "$out" vipsthumbnail
    per_sec "$count" $((end - start))
}

magick_one() { # file out
    local stem
    stem="$(basename "$1" .jpg)"
    MAGICK_THREAD_LIMIT=1 "$convert" "$1" -quality 80 \
        \( +clone -thumbnail 500x -write "$2/${stem}_500.webp" +delete \) \
        \( +clone -thumbnail 342x -write "$2/${stem}_342.webp" +delete \) \
        \( +clone -thumbnail 185x -write "$2/${stem}_185.webp" +delete \) \
        \( +clone -thumbnail 92x -write "$2/${stem}_92.webp" +delete \) null:
}
export -f magick_one
export convert

run_magick() {
    local out="$work/out-magick" start end
    rm -rf "$out" && mkdir -p "$out"
    start=$(now_ns)
    find "$input" -name '*.jpg' -print0 | sort -z \
        | xargs -0 -P "$cores" -I{} bash -c 'magick_one "$1" "$2"' _ {} "$out" || die "convert failed"
    end=$(now_ns)
    check_outputs "$out" convert
    per_sec "$count" $((end - start))
}

say "$rounds rounds of $count posters → 4 WebP widths each; $cores cores; Swift threads $threads; logs in var/bench-images/"
swifts=(); vipss=(); magicks=(); vratios=(); mratios=(); peaks=()
for round in $(seq 1 "$rounds"); do
    case $((round % 3)) in
        1) s=$(run_swift "$work/r$round-swift.log"); v=$(run_vips); m=$(run_magick) ;;
        2) v=$(run_vips); m=$(run_magick); s=$(run_swift "$work/r$round-swift.log") ;;
        0) m=$(run_magick); s=$(run_swift "$work/r$round-swift.log"); v=$(run_vips) ;;
    esac
    peak=$(grep -oE 'peak_rss_mb=[0-9]+' "$work/r$round-swift.log" | cut -d= -f2)
    swifts+=("$s"); vipss+=("$v"); magicks+=("$m"); peaks+=("$peak")
    vratios+=("$(ratio "$s" "$v")"); mratios+=("$(ratio "$s" "$m")")
    printf 'round %d: swift=%s vipsthumbnail=%s convert=%s posters/s; vips_ratio=%s magick_ratio=%s; swift peak RSS %s MB\n' \
        "$round" "$s" "$v" "$m" "$(ratio "$s" "$v")" "$(ratio "$s" "$m")" "$peak"
done

# For reference (not in the ratios): the worker's default configuration also writes a JPEG fallback per width.
rm -rf "$work/out-swift-fallback"
"$bench" run --input "$input" --out "$work/out-swift-fallback" --threads "$threads" --jpeg-fallback \
    >"$work/swift-fallback.log" 2>&1 || die "ImagingBenchmark --jpeg-fallback failed"
printf 'with JPEG fallbacks (8 files per poster): %s\n' "$(tail -n1 "$work/swift-fallback.log")"

printf 'bench-images: vips_ratio=%.2f magick_ratio=%.2f swift_per_sec=%s vips_per_sec=%s magick_per_sec=%s peak_rss_mb=%s\n' \
    "$(median "${vratios[@]}")" "$(median "${mratios[@]}")" "$(median "${swifts[@]}")" "$(median "${vipss[@]}")" \
    "$(median "${magicks[@]}")" "$(printf '%s\n' "${peaks[@]}" | sort -n | tail -n1)"
