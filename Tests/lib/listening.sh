# Sourced by the test and benchmark scripts that start `watchdogd serve --listen 127.0.0.1:0`.

# listening_url FILE: waits up to 30 s for serve's "listening on URL" line in FILE (its stdout)
# and prints the URL; prints nothing if it never came. Empty FILE before starting the daemon
# (`: > FILE`): `serve … > FILE &` truncates it only once the background shell runs, and until
# then an earlier daemon's line is read (a restart once failed so, in 14 ms, on a loaded CI host).
listening_url() {
  for _ in $(seq 300); do grep -q '^listening on ' "$1" 2>/dev/null && break; sleep 0.1; done
  sed -n 's/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$1" | head -n 1
}
