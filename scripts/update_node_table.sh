#!/usr/bin/env bash
# Writes what is generated from the node types (core/exec/nodes): README.md's node table (the
# output of `flowbench-cli nodes --markdown` replaces the lines between the markers
# `<!-- nodes:begin ... -->` and `<!-- nodes:end -->`) and resources/node_types.json, from which
# the window reads them. test_cli and test_node_types fail while either differs. Run it after
# adding or changing a node type.
#
#   scripts/update_node_table.sh                  with build/bin/flowbench-cli
#   scripts/update_node_table.sh PATH/TO/flowbench-cli
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

cli="$(realpath -m "${1:-$FB_BUILD_DIR/bin/flowbench-cli}")"
[[ -x "$cli" ]] || fb_die "$cli is not built (cmake --build $FB_BUILD_DIR)"
if ! grep -q '^<!-- nodes:begin' README.md || ! grep -q '^<!-- nodes:end' README.md; then
    fb_die "README.md lacks the node-table markers <!-- nodes:begin ... --> and <!-- nodes:end -->"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cli" nodes --markdown > "$work/table.md"
awk -v table="$work/table.md" '
    index($0, "<!-- nodes:begin") == 1 { print; while ((getline line < table) > 0) print line; skip = 1; next }
    index($0, "<!-- nodes:end") == 1 { skip = 0 }
    !skip { print }' README.md > "$work/README.md"
# Written over, not moved, so README.md keeps its permissions.
cat "$work/README.md" > README.md
fb_say "README.md: node table written from $cli nodes --markdown"
# The window reads the node types from this file (widgets/editing/node_types.h).
"$cli" nodes --json > "$work/node_types.json"
cat "$work/node_types.json" > resources/node_types.json
fb_say "resources/node_types.json: written from $cli nodes --json"
