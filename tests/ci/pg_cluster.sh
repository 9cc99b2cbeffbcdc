# Sourced by the PostgreSQL tests (postgres.sh, postgres_failures.sh): a cluster of the test's
# own in a temporary folder, Debian's postgresql binaries, listening only on a Unix socket
# there, run as an unprivileged user where the test runs as root (initdb refuses root), and
# stopped and removed on exit (KEEP=1 keeps the folder). Skips (exit 77) where there is no
# server, no psql, or an attnprof built without libpq. Expects $attnprof; sets $tmp, $pgbin,
# $url (the cluster's URL) and sql (one statement through psql).
skip() { echo "skipped: $*"; exit 77; }
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -x "$pgbin/initdb" ] || skip "no PostgreSQL server (Debian's postgresql package; ci/setup.sh installs it)"
command -v psql >/dev/null || skip "no psql (postgresql-client)"
if "$attnprof" pull --from postgresql:///none --db /dev/null 2>&1 | grep -q 'built without PostgreSQL'; then
  skip "attnprof was built without PostgreSQL (no libpq-dev at build time)"
fi

# The cluster's owner: ourselves, or as root an unprivileged user that every Debian machine
# has (postgres where the server package made it, else nobody).
tmp="$(mktemp -d /tmp/attnprof-pg.XXXXXX)"
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  owner=nobody
  id postgres >/dev/null 2>&1 && owner=postgres
  chown "$owner" "$tmp"
  as_owner=(setpriv --reuid="$owner" --regid="$(id -g "$owner")" --clear-groups --)
fi
pg_up=false
cleanup() {
  if [ "$pg_up" = true ]; then
    "${as_owner[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
"${as_owner[@]}" "$pgbin/initdb" -D "$tmp/data" -U attnprof --auth=trust --no-sync -E UTF8 \
  --locale=C >"$tmp/initdb.log" 2>&1 || { cat "$tmp/initdb.log"; fail "initdb"; }
"${as_owner[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/data/server.log" -w -s \
  -o "-k $tmp -c listen_addresses= -c fsync=off -c max_connections=40" start \
  || { cat "$tmp/data/server.log"; fail "pg_ctl start"; }
pg_up=true
url="postgresql:///postgres?host=$tmp&user=attnprof"
sql() { psql "$url" -X -At -v ON_ERROR_STOP=1 -c "$1"; }
