#!/usr/bin/env bash
# Two watchdogd nodes and one PostgreSQL in network namespaces, a router namespace between them;
# n1 is cut from PostgreSQL (iptables DROP in the router's FORWARD chain, so neither end sees a
# local error) for CUT_SECONDS under load, then healed. load.py checks issue 45's acceptance:
# every POST to n1 answered within 5 s (503 + Retry-After), its /healthz answers and /readyz
# says not ready, n2 keeps at least half its throughput, n1 acknowledges within 3 s of the heal,
# and every acknowledged id is in PostgreSQL.
#
#   usage: Tests/Partition/run.sh        (root; WATCHDOGD defaults to the debug build)
#   CUT_SECONDS=30 BEFORE_SECONDS=10 AFTER_SECONDS=10 CLIENTS=4 KEEP=1 (leave WORK for a look)
#   HOLD=1: the cut lands while a session from n1's namespace holds the shared roll-up rows
#   (`releases`, locked by an UPDATE in an open transaction, with the session settings
#   watchdogd gives its own: idle_in_transaction_session_timeout 3 s) — n1's batch cut between
#   its roll-up statement and its COMMIT, made to happen every time instead of by chance.
#   LOSS=5: instead of a cut, drop 5 % of the packets to and from n1 (iptables statistic
#   match) for CUT_SECONDS; the check is then that n2's p99 does not rise more than 1.5×.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "Tests/Partition/run.sh needs root (network namespaces, iptables)" >&2; exit 1; }
command -v iptables > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iptables > /dev/null
watchdogd=$(realpath "${WATCHDOGD:-.build/debug/watchdogd}")
cut=${CUT_SECONDS:-30} before=${BEFORE_SECONDS:-10} after=${AFTER_SECONDS:-10} clients=${CLIENTS:-4}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d /tmp/watchdog-partition.XXXXXX)
chmod 755 "$work"
tag=wp$$                       # namespaces and links are named after this run
net=10.$((100 + $$ % 100))     # n1 $net.1.2, n2 $net.2.2, PostgreSQL $net.3.2; the router .1 on each
router=$tag-r
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  ip netns exec "$tag-db" runuser -u postgres -- "$bin/pg_ctl" -D "$work/pg" -m immediate stop > /dev/null 2>&1 || true
  for ns in "$router" "$tag-n1" "$tag-n2" "$tag-db"; do ip netns del "$ns" 2> /dev/null || true; done
  if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT

ip netns add "$router"
ip netns exec "$router" sysctl -qw net.ipv4.ip_forward=1
ip -n "$router" link set lo up
link() {  # link NAME SUBNET: a namespace NAME on $net.SUBNET.0/24 behind the router
  local ns=$tag-$1
  ip netns add "$ns"
  ip link add "$tag$1r" type veth peer name "$tag$1x"
  ip link set "$tag$1r" netns "$router"
  ip link set "$tag$1x" netns "$ns"
  ip -n "$router" addr add "$net.$2.1/24" dev "$tag$1r"
  ip -n "$ns" addr add "$net.$2.2/24" dev "$tag$1x"
  ip -n "$router" link set "$tag$1r" up
  ip -n "$ns" link set "$tag$1x" up
  ip -n "$ns" link set lo up
  ip -n "$ns" route add default via "$net.$2.1"
}
link n1 1
link n2 2
link db 3

# PostgreSQL in its namespace, as the `postgres` user (initdb/pg_ctl as .ci/run's does).
mkdir -p "$work/pg" "$work/pg-log" && chown postgres "$work/pg" "$work/pg-log"
runuser -u postgres -- "$bin/initdb" -D "$work/pg" -U postgres -A trust --no-instructions > "$work/initdb.log"
cat >> "$work/pg/postgresql.conf" <<CONF
listen_addresses = '$net.3.2'
port = 5432
unix_socket_directories = '$work/pg'
max_connections = 100
CONF
echo "host all all $net.0.0/16 trust" >> "$work/pg/pg_hba.conf"
ip netns exec "$tag-db" runuser -u postgres -- "$bin/pg_ctl" -D "$work/pg" -l "$work/pg-log/server.log" -w -t 60 start > /dev/null
ip netns exec "$tag-db" runuser -u postgres -- "$bin/createdb" -h "$work/pg" -U postgres watchdog
store="postgres://postgres@$net.3.2:5432/watchdog"

key=$(ip netns exec "$tag-n1" "$watchdogd" apps add com.example.partition --store "$store")
start_node() {  # start_node NAME VAR: serve on 127.0.0.1:0 in its namespace; its URL goes into VAR
  # Not in a $(…) subshell: the node's pid must reach `pids`, or `cleanup` leaves it running.
  ip netns exec "$tag-$1" "$watchdogd" serve --store "$store" --listen 127.0.0.1:0 --data-dir "$work/$1" \
    --rate-per-key 0 --rate-per-address 0 --retention-days 0 > "$work/$1.out" 2> "$work/$1.log" &
  pids+=($!)
  local url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^listening on //p' "$work/$1.out")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$1 did not start: $(cat "$work/$1.log")" >&2; exit 1; }
  printf -v "$2" '%s' "$url"
}
start_node n1 url1
start_node n2 url2

total=$((before + cut + after))
now() { date +%s.%N; }
started=$(now)
ip netns exec "$tag-n1" python3 Tests/Partition/load.py load "$url1" "$key" "$work/n1" "$total" "$clients" & load1=$!
ip netns exec "$tag-n2" python3 Tests/Partition/load.py load "$url2" "$key" "$work/n2" "$total" "$clients" & load2=$!
pids+=("$load1" "$load2")
sleep "$before"
if [ -n "${HOLD:-}" ]; then
  # A transaction from n1's address that has written the roll-up rows every batch adds to.
  { echo "SET idle_in_transaction_session_timeout = 3000; BEGIN; UPDATE releases SET sessions = sessions WHERE app = 'com.example.partition';"
    sleep $((cut + 5)); } | ip netns exec "$tag-n1" "$bin/psql" -q -h "$net.3.2" -U postgres -d watchdog > "$work/hold.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    held=$(ip netns exec "$tag-db" runuser -u postgres -- "$bin/psql" -h "$work/pg" -U postgres -Atq -d watchdog -c \
      "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psql' AND client_addr = '$net.1.2' AND state = 'idle in transaction'")
    [ "$held" = 1 ] && break
    sleep 0.05
  done
  [ "$held" = 1 ] || { echo "the holding transaction did not start: $(cat "$work/hold.log")" >&2; exit 1; }
  echo "a session from n1 holds the roll-up rows of com.example.partition"
fi
drop=(-j DROP)
[ -n "${LOSS:-}" ] && drop=(-m statistic --mode random --probability "$(python3 -c "print(${LOSS} / 100)")" -j DROP)
cut_at=$(now)
ip netns exec "$router" iptables -I FORWARD -s "$net.1.2" "${drop[@]}"
ip netns exec "$router" iptables -I FORWARD -d "$net.1.2" "${drop[@]}"
if [ -n "${LOSS:-}" ]; then echo "n1 loses $LOSS % of its packets to and from PostgreSQL for $cut s"; else echo "n1 cut from PostgreSQL for $cut s"; fi
sleep "$cut"
ip netns exec "$router" iptables -D FORWARD -s "$net.1.2" "${drop[@]}"
ip netns exec "$router" iptables -D FORWARD -d "$net.1.2" "${drop[@]}"
heal_at=$(now)
echo "healed"
wait "$load1" "$load2"
ended=$(now)
printf '{"start": %s, "cut": %s, "heal": %s, "end": %s, "hold": %s, "loss": %s}\n' "$started" "$cut_at" "$heal_at" "$ended" \
  "$([ -n "${HOLD:-}" ] && echo true || echo false)" "${LOSS:-0}" > "$work/times.json"

ip netns exec "$tag-db" runuser -u postgres -- "$bin/psql" -h "$work/pg" -U postgres -Atq -d watchdog \
  -c "SELECT id FROM reports WHERE app = 'com.example.partition'" > "$work/stored.txt"
echo "n1's log during the run:"
grep -iE "database|lost|error|crash|fatal|signal" "$work/n1.log" | cut -c1-300 | head -n 20 || true
failed=0
# A node that died or stopped answering is said with its log's tail, not by a silent `set -e`.
for node in 0 1; do
  kill -0 "${pids[$node]}" 2> /dev/null || { echo "FAIL: n$((node + 1)) is not running any more; its log ends:"; tail -n 40 "$work/n$((node + 1)).log"; failed=1; }
done
# Said once, counted in /metrics.
ip netns exec "$tag-n1" curl -sS --max-time 10 "$url1/metrics" > "$work/n1.all-metrics" ||
  { echo "FAIL: n1 did not answer /metrics; its log ends:"; tail -n 40 "$work/n1.log"; failed=1; }
grep -E '^watchdog_store_' "$work/n1.all-metrics" | tee "$work/n1.metrics" || true
if [ -z "${LOSS:-}" ]; then
  lost_lines=$(grep -c "lost the database" "$work/n1.log" || true)
  [ "$lost_lines" = 1 ] || { echo "FAIL: n1 logged the loss $lost_lines times, not once"; failed=1; }
  grep -qE '^watchdog_store_outages_total 1$' "$work/n1.metrics" || { echo "FAIL: /metrics does not count the outage"; failed=1; }
  grep -qE '^watchdog_store_unavailable_responses_total [1-9]' "$work/n1.metrics" || { echo "FAIL: /metrics does not count the 503s"; failed=1; }
fi
python3 Tests/Partition/load.py check "$work" || failed=1
exit $failed
