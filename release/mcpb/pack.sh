#!/usr/bin/env bash
# Packs one MCP Bundle (.mcpb) of 3gs for one platform:
#
#   release/mcpb/pack.sh --version 1.2.3 --platform linux-amd64 [--bin dist/3gs-linux-amd64] [--out dist]
#
# The bundle holds the manifest, written by internal/mcpb from the
# generated tool table, and one binary: --bin (a release build, whose
# GOOS/GOARCH are checked against --platform), or else one built here. The
# official CLI (@anthropic-ai/mcpb, pinned by package-lock.json beside this
# script) validates the manifest and packs the bundle. Packing is
# reproducible: every zip entry carries SOURCE_DATE_EPOCH (default: the
# time of the last commit) rather than the time of packing, so the same
# binary gives the same bundle. It writes OUT/3gs-VERSION-PLATFORM.mcpb
# (OUT defaults to dist) and prints its SHA-256 on stdout; everything else
# goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
  echo "usage: $0 --version MAJOR.MINOR.PATCH --platform OS-ARCH [--bin BINARY] [--out DIR]" >&2
  exit 2
}

version= platform= bin= out="$root/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version=${2:-}; shift 2 || usage ;;
    --platform) platform=${2:-}; shift 2 || usage ;;
    --bin) bin=${2:-}; shift 2 || usage ;;
    --out) out=${2:-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
[ -n "$version" ] && [ -n "$platform" ] || usage
version=${version#v}
goos=${platform%%-*} goarch=${platform#*-}

cli="$here/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js"
if [ ! -f "$cli" ]; then
  npm ci --prefix "$here" --no-audit --no-fund >&2
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/server"

# The manifest first: it refuses a version or platform no bundle is made
# for, before anything is built.
(cd "$root" && go run ./internal/mcpb/cmd/mcpbgen manifest -version "$version" -platform "$platform") >"$stage/manifest.json"
entry=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).server.entry_point)' "$stage/manifest.json")

if [ -n "$bin" ]; then
  # A binary for another platform would install fine and fail at its
  # first start on the user's machine; the go command reads what it was
  # built for from the binary itself.
  info=$(cd "$root" && go version -m "$bin" 2>/dev/null) || true
  built="$(awk '$1 == "build" && sub(/^GOOS=/, "", $2) { print $2 }' <<<"$info")-$(awk '$1 == "build" && sub(/^GOARCH=/, "", $2) { print $2 }' <<<"$info")"
  if [ "$built" != "$platform" ]; then
    echo "$0: $bin is built for ${built}, not $platform (a binary the go command cannot read shows as "-")" >&2
    exit 1
  fi
  cp "$bin" "$stage/$entry"
else
  (cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "$stage/$entry" ./cmd/3gs)
fi

# mcpb pack stores each file's permission bits: set them rather than
# inherit the umask, so that two machines pack the same bytes.
chmod 0755 "$stage/server" "$stage/$entry"
chmod 0644 "$stage/manifest.json"

: "${SOURCE_DATE_EPOCH:=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 315532800)}"
export SOURCE_DATE_EPOCH TZ=UTC

node "$cli" validate "$stage/manifest.json" >&2
mkdir -p "$out"
bundle="$out/3gs-$version-$platform.mcpb"
node --import "$here/fixdate.mjs" "$cli" pack "$stage" "$bundle" >&2
sha256sum "$bundle"
