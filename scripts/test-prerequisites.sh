#!/usr/bin/env bash
# What the tests need from Debian, installed when it is missing: `npm test` runs this first (pretest), and so
# `npm ci && npm test` is the whole set-up of a fresh Debian machine. As root, or with sudo that asks no password, it
# installs the missing packages (apt-get); otherwise it stops at once, with one line naming them and the command.
set -euo pipefail

missing=()
# PHP's SoapServer (php-cli, php-soap): a real SOAP server for the SOAP connector's tests.
# (Asked of PHP itself: `php -m | grep -q` can fail under pipefail when grep stops reading early.)
php -r 'exit(extension_loaded("soap") ? 0 : 1);' >/dev/null 2>&1 || missing+=(php-cli php-soap)
# PostgreSQL and Redis for the storage, limiter, queue and scale-out tests (scripts/test-services.sh starts them).
command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# python-zeep (with suds' copy of the SOAP encoding schema) is the independent oracle of the WSDL corpus tests;
# spyne serves a real Python SOAP service to them; graphene (2, on graphql-core 2) a real Python GraphQL server.
# Debian's own Python, not whatever python3 is first on PATH.
/usr/bin/python3 -c 'import zeep, suds, spyne, graphene' >/dev/null 2>&1 ||
  missing+=(python3-zeep python3-suds python3-spyne python3-graphene)
# WS-Security: xmlsec1 and the JDK's XML Signature (javac compiles the fixture) verify the signatures, openssl makes
# the keys (and the TLS tests' certificates).
command -v xmlsec1 >/dev/null 2>&1 || missing+=(xmlsec1)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
# The JAX-WS reference implementation (Metro) serves a real Java SOAP service that answers MTOM.
[ -f /usr/share/java/jaxws-rt.jar ] || missing+=(libjaxws-java)
# Debian's chromium: the console's browser tests drive it with playwright-core, which never downloads a browser.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# tinyproxy is the real forwarding proxy of the HTTPS_PROXY tests.
command -v tinyproxy >/dev/null 2>&1 || missing+=(tinyproxy)
# docker-compose reads the compose files as Debian's Compose does (test/interop/deploy-files.test.ts).
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo)
else
  echo "npm test needs these Debian packages: ${missing[*]}; install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "test-prerequisites: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
