#!/usr/bin/env bash
# Renders the PNG sizes of the application icon from the scalable one:
#
#   packaging/icons/render.sh     -> packaging/icons/<N>x<N>/io.flowbench.Flowbench.png
#
# The PNGs are committed (the build does not need librsvg); run this again after editing
# io.flowbench.Flowbench.svg. Needs rsvg-convert (Debian: librsvg2-bin); optipng, when
# present, makes the files smaller.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
svg="$here/io.flowbench.Flowbench.svg"
command -v rsvg-convert >/dev/null ||
    { echo "render.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2; exit 1; }

for n in 16 24 32 48 64 128 256 512; do
    mkdir -p "$here/${n}x${n}"
    png="$here/${n}x${n}/io.flowbench.Flowbench.png"
    rsvg-convert --width "$n" --height "$n" --format png --output "$png" "$svg"
    if command -v optipng >/dev/null; then optipng -quiet -o5 -strip all "$png"; fi
    echo "$png"
done
