#!/usr/bin/env python3
"""Hostile clients through deploy/nginx.conf (issue 13): ambiguous request framing and a client
trickling its headers, sent over TLS to nginx in front of watchdogd. Prints one line per case:
NAME STATUSES CLOSED SMUGGLED (whether the smuggled request was answered) BY (who answered),
then how long nginx kept a client trickling a header byte a second. Used by
deploy/test-tls-proxy.sh; usage: proxy-hostile.py PORT CAFILE ADMIN_TOKEN [TRICKLE_SECONDS]."""
import socket
import ssl
import sys
import time

port, cafile, admin = int(sys.argv[1]), sys.argv[2], sys.argv[3]
context = ssl.create_default_context(cafile=cafile)


def connect():
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    return context.wrap_socket(raw, server_hostname="localhost")


def exchange(data):
    s = connect()
    s.sendall(data)
    out, closed = b"", False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
    except (socket.timeout, ssl.SSLError, ConnectionResetError):
        pass
    s.close()
    statuses = [line.split(b" ")[1].decode() for line in out.split(b"\r\n") if line.startswith(b"HTTP/1.")]
    by = "nginx" if b"<center>nginx" in out else "watchdogd" if b'"error"' in out else "?"
    return statuses, closed, b'"apps"' in out, by


smuggled = b"GET /v1/apps HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + admin.encode() + b"\r\n\r\n"
cases = {
    "cl-with-chunked": b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" % (5 + len(smuggled)) + smuggled,
    "cl-0-then-n": b"Content-Length: 0\r\nContent-Length: %d\r\n\r\n" % len(smuggled) + smuggled,
    "cl-negative": b"Content-Length: -5\r\n\r\n" + smuggled,
    "cl-hex": b"Content-Length: 0x10\r\n\r\n" + smuggled,
    "te-unknown": b"Transfer-Encoding: gzip\r\n\r\n" + smuggled,
}
for name, rest in cases.items():
    statuses, closed, answered, by = exchange(b"POST /healthz HTTP/1.1\r\nHost: localhost\r\n" + rest)
    print(name, ",".join(statuses) or "-", "closed" if closed else "open", "smuggled" if answered else "not-smuggled", "by-" + by)

# Headers trickled a byte a second: how long nginx keeps the connection (its
# client_header_timeout), while watchdogd never sees it.
s = connect()
request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: " + b"p" * 100 + b"\r\n\r\n"
started = time.monotonic()
closed_after = None
s.settimeout(1)
for i in range(int(sys.argv[4]) if len(sys.argv) > 4 else 15):
    try:
        s.sendall(request[i:i + 1])
        if not s.recv(1):
            closed_after = time.monotonic() - started
            break
    except socket.timeout:
        continue
    except (OSError, ssl.SSLError):
        closed_after = time.monotonic() - started
        break
print("slow-headers", "closed-after-%.0fs" % closed_after if closed_after is not None else "still-open")
