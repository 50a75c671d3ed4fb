#!/bin/sh
# The entrypoint of the front's image (deploy/Dockerfile.nginx): runs its command (nginx ...) on a
# copy of nginx's configuration in which each `server NAME:PORT ...;` line is one line per
# address NAME resolves to. nginx's consistent hash (`hash $kiln_route consistent` in
# deploy/k8s/nginx.conf) places each server on its ring by the name its line gives, so replicas
# behind one name (compose's service `kiln`, Kubernetes' headless Service `kiln`) would share one
# place on the ring and take its calls in turn, whatever their kiln-route. Names are resolved
# once, when the front starts, as nginx itself does. Any other command runs as it is.
set -eu
[ "${1:-}" = nginx ] || exec "$@"
conf=/etc/nginx/nginx.conf
out=/tmp/nginx.conf  # nginx reads a relative `include` from here: the configuration has none
given=no
last=
for arg in "$@"; do
  if [ "$last" = -c ]; then conf=$arg given=yes; fi
  last=$arg
done
awk '
  # server NAME:PORT [parameters];  in an upstream block (not `server {`, not an address)
  $1 == "server" && $2 ~ /^[A-Za-z][-A-Za-z0-9.]*:[0-9]+;?$/ {
    name = $2; sub(/;$/, "", name)
    port = name; sub(/.*:/, "", port); sub(/:[0-9]+$/, "", name)
    rest = $0; sub(/^[ \t]*server[ \t]+[^ \t;]+/, "", rest)
    indent = $0; sub(/server.*/, "", indent)
    cmd = "getent ahosts " name " | cut -d \" \" -f 1 | sort -u"
    n = 0
    while ((cmd | getline ip) > 0) {
      if (ip ~ /:/) ip = "[" ip "]"
      print indent "server " ip ":" port rest
      n++
    }
    close(cmd)
    if (n > 0) next
  }
  { print }' "$conf" >"$out"
n=$#
last=
for arg in "$@"; do
  if [ "$last" = -c ]; then set -- "$@" "$out"; else set -- "$@" "$arg"; fi
  last=$arg
done
shift "$n"
if [ "$given" = no ]; then shift; set -- nginx -c "$out" "$@"; fi
exec "$@"
