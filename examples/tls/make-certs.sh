#!/usr/bin/env bash
# Generates a throwaway PKI for the TLS examples (never use these keys in production):
#   ca.crt/ca.key                 the CA (also the client-auth CA and the upstream CA)
#   www.crt/www.key               www.example.test
#   wild.crt/wild.key             *.api.example.test
#   backend.crt/backend.key       backend.example.test + IP 127.0.0.1 (for upstream TLS)
#   client.crt/client.key         a client certificate for mutual TLS (CN=alice)
# Usage: examples/tls/make-certs.sh [output dir]   (default: examples/tls/certs)
set -euo pipefail
out="${1:-$(dirname "$0")/certs}"
mkdir -p "$out"
cd "$out"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 3650 -subj "/CN=Switchboard Example CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

leaf() { # name cn san
  openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n%s\n' \
    "${3:+subjectAltName=$3}" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 8)" \
    -days 825 -out "$1.crt" -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
leaf www www.example.test "DNS:www.example.test"
leaf wild "*.api.example.test" "DNS:*.api.example.test"
leaf backend backend.example.test "DNS:backend.example.test,IP:127.0.0.1"
leaf client alice ""
echo "certificates written to $out"
