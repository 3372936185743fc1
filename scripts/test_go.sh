#!/usr/bin/env bash
# The Go package (bindings/go) against an installed gpumst: gofmt, go vet, and
# go test -race on both packages (gpumst and gpumst/gonumgraph: every tier that opens,
# goroutines sharing one context, the Example functions), then one pass over the
# benchmarks (-benchtime=1x on the small graph) so that they keep compiling and
# agreeing with gonum. cgo finds the library through pkg-config only, never the
# build tree; the test binaries find it through an rpath to PREFIX/lib.
#
# Usage: bash scripts/test_go.sh PREFIX      (scripts/test_install.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${1:?usage: scripts/test_go.sh PREFIX (an installed gpumst)}"
[[ -f "$PREFIX/lib/pkgconfig/gpumst.pc" ]] || { echo "test_go: $PREFIX holds no gpumst install" >&2; exit 1; }
command -v go >/dev/null || { echo "test_go: go is not on PATH (CI installs it; see .ci/run)" >&2; exit 1; }

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
export CGO_ENABLED=1
export CGO_LDFLAGS="-Wl,-rpath,$PREFIX/lib"
ROOT="$PWD"
cd bindings/go
echo "== Go $(go env GOVERSION): gofmt -l, go vet"
unformatted=$(gofmt -l .)
[[ -z "$unformatted" ]] || { echo "test_go: not gofmt-formatted: $unformatted" >&2; exit 1; }
go vet ./...
echo "== Go: go test -race ./..."
go test -race -count=1 ./...
echo "== Go: the benchmarks once each (small graph; the 1M-edge run is benches, not tests)"
go test -run '^$' -bench 'MSF40K' -benchtime 1x ./gonumgraph/ | grep -E '^(Benchmark|ok|FAIL)'

echo "== Go: the README's Go example, as a module of its own that requires gpumst.dev/gpumst"
cd "$ROOT"
EXAMPLE="$PWD/target/go-readme"
rm -rf "$EXAMPLE"
mkdir -p "$EXAMPLE"
awk '/^```go$/{on=1; next} /^```$/{on=0} on' README.md >"$EXAMPLE/main.go"
[[ -s "$EXAMPLE/main.go" ]] || { echo "test_go: README.md has no \`\`\`go example" >&2; exit 1; }
cat >"$EXAMPLE/go.mod" <<MOD
module example

go 1.24

require gpumst.dev/gpumst v0.0.0

replace gpumst.dev/gpumst => $PWD/bindings/go
MOD
got=$(cd "$EXAMPLE" && go mod tidy >/dev/null 2>&1 && go run .)
echo "$got"
want='^\[0 1 3\] 4 [a-z]+
\[0 5 3 10\]
true gpumst: minimum spanning forest: invalid graph: edge 1: v = 9 is out of range for 4 vertices$'
[[ "$got" =~ $want ]] || { echo "test_go: the README's Go example printed something else" >&2; exit 1; }
