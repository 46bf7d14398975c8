#!/usr/bin/env python3
"""Load and probes for Tests/Partition/run.sh (stdlib only).

  load.py load URL KEY OUT SECONDS CLIENTS   posts batches of 100 fresh reports from CLIENTS
      threads for SECONDS, and polls /healthz and /readyz every 0.25 s; one JSON line per
      request in OUT/requests.jsonl, every acknowledged id in OUT/acked.txt.
  load.py check WORK                         reads WORK/n1, WORK/n2, WORK/times.json and
      WORK/stored.txt (ids in PostgreSQL) and checks the acceptance of issue 45; prints the
      figures and exits 1 when one fails.
"""
import http.client
import json
import os
import sys
import threading
import time
import uuid

APP = "com.example.partition"
BATCH = 100
TIMEOUT = 30  # the client's own: a request the node never answers shows as 30 s


def report(now):
    return {
        "id": str(uuid.uuid4()), "kind": "view_frame_mismatch", "occurred_at": now, "app": APP,
        "release": {"version": "1.0.0", "build": "1", "channel": "beta"}, "app_state": "active",
        "screen": "ComposeViewController",
        "view": {"name": "composeToolbar", "expected": {"x": 0, "y": 228, "width": 390, "height": 44},
                 "actual": {"x": 0, "y": 264, "width": 390, "height": 44}},
        "keyboard": {"visible": True, "mode": "docked", "height": 252, "input_mode": "ja-JP"},
        "logs": ["[keyboard] partition test"],
    }


class Log:
    def __init__(self, out):
        self.lock = threading.Lock()
        self.requests = open(os.path.join(out, "requests.jsonl"), "a")
        self.acked = open(os.path.join(out, "acked.txt"), "a")

    def write(self, entry, ids=None):
        with self.lock:
            self.requests.write(json.dumps(entry) + "\n")
            if ids:
                self.acked.write("\n".join(ids) + "\n")

    def close(self):
        self.requests.close()
        self.acked.close()


def connect(host, port):
    return http.client.HTTPConnection(host, port, timeout=TIMEOUT)


def poster(host, port, key, deadline, log):
    connection = connect(host, port)
    while time.time() < deadline:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        items = [report(now) for _ in range(BATCH)]
        body = json.dumps({"reports": items}).encode()
        start = time.time()
        entry = {"kind": "post", "start": start}
        try:
            connection.request("POST", "/v1/reports", body, {"Authorization": "Bearer " + key, "Content-Type": "application/json"})
            response = connection.getresponse()
            answer = response.read()
            entry.update(status=response.status, retry_after=response.getheader("Retry-After"))
            ids = None
            if response.status == 202:
                counts = json.loads(answer)
                entry["accepted"] = counts["accepted"]
                ids = [item["id"] for item in items]
            else:
                entry["code"] = json.loads(answer).get("error", {}).get("code") if answer.startswith(b"{") else None
                time.sleep(0.05)  # as a client honouring Retry-After would not hammer; short to keep counting
        except Exception as error:  # timeout, reset: no answer
            entry.update(status=0, error=type(error).__name__)
            ids = None
            connection.close()
            connection = connect(host, port)
        entry["end"] = time.time()
        log.write(entry, ids)


def prober(host, port, deadline, log):
    while time.time() < deadline:
        for path in ("/healthz", "/readyz"):
            start = time.time()
            entry = {"kind": path, "start": start}
            try:
                connection = http.client.HTTPConnection(host, port, timeout=10)
                connection.request("GET", path)
                response = connection.getresponse()
                response.read()
                entry["status"] = response.status
                connection.close()
            except Exception as error:
                entry.update(status=0, error=type(error).__name__)
            entry["end"] = time.time()
            log.write(entry)
        time.sleep(0.25)


def load(url, key, out, seconds, clients):
    host, port = url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
    os.makedirs(out, exist_ok=True)
    log = Log(out)
    deadline = time.time() + seconds
    threads = [threading.Thread(target=poster, args=(host, int(port), key, deadline, log)) for _ in range(clients)]
    threads.append(threading.Thread(target=prober, args=(host, int(port), deadline, log)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()


def entries(directory):
    with open(os.path.join(directory, "requests.jsonl")) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def acked(directory):
    with open(os.path.join(directory, "acked.txt")) as lines:
        return [line.strip() for line in lines if line.strip()]


def rate(posts, start, end):
    """Reports acknowledged a second by answers in [start, end)."""
    stored = sum(p.get("accepted", 0) for p in posts if p["status"] == 202 and start <= p["end"] < end)
    return stored / max(end - start, 1e-9)


def p99(posts):
    """The 99th percentile of the POSTs' answer times, in seconds."""
    durations = sorted(p["end"] - p["start"] for p in posts)
    return durations[min(len(durations) - 1, int(len(durations) * 0.99))] if durations else 0


def check_loss(work, times):
    """Loss on n1's link: n2's p99 rises at most 1.5×; nothing acknowledged is lost."""
    cut, heal = times["cut"], times["heal"]
    n1, n2 = entries(os.path.join(work, "n1")), entries(os.path.join(work, "n2"))
    posts1 = [e for e in n1 if e["kind"] == "post"]
    posts2 = [e for e in n2 if e["kind"] == "post"]
    before2 = p99([p for p in posts2 if times["start"] + 2 <= p["start"] and p["end"] < cut])
    during2 = p99([p for p in posts2 if cut <= p["start"] and p["end"] < heal])
    figures = {"loss_percent": times["loss"], "seconds": round(heal - cut, 1),
               "n1_reports_per_s_before": round(rate(posts1, times["start"] + 2, cut)), "n1_reports_per_s_during": round(rate(posts1, cut, heal)),
               "n1_p99_before_s": round(p99([p for p in posts1 if times["start"] + 2 <= p["start"] and p["end"] < cut]), 3),
               "n1_p99_during_s": round(p99([p for p in posts1 if cut <= p["start"] and p["end"] < heal]), 3),
               "n1_non_202_during": sum(p["status"] != 202 for p in posts1 if cut <= p["start"] < heal),
               "n2_reports_per_s_before": round(rate(posts2, times["start"] + 2, cut)), "n2_reports_per_s_during": round(rate(posts2, cut, heal)),
               "n2_p99_before_s": round(before2, 3), "n2_p99_during_s": round(during2, 3)}
    failures = []
    if during2 > 1.5 * before2:
        failures.append(f"n2's p99 rose from {before2:.3f} to {during2:.3f} s with loss on n1's link; at most 1.5x")
    with open(os.path.join(work, "stored.txt")) as lines:
        stored = set(line.strip() for line in lines if line.strip())
    ids = acked(os.path.join(work, "n1")) + acked(os.path.join(work, "n2"))
    lost = [i for i in ids if i not in stored]
    figures.update(acknowledged=len(ids), lost=len(lost))
    if lost:
        failures.append(f"{len(lost)} acknowledged ids are not in PostgreSQL")
    print(json.dumps(figures, indent=1))
    for failure in failures:
        print("FAIL:", failure)
    print("loss check:", "FAILED" if failures else "passed")
    return 1 if failures else 0


def check(work):
    with open(os.path.join(work, "times.json")) as file:
        times = json.load(file)
    if times.get("loss"):
        return check_loss(work, times)
    cut, heal = times["cut"], times["heal"]
    n1, n2 = entries(os.path.join(work, "n1")), entries(os.path.join(work, "n2"))
    posts1 = [e for e in n1 if e["kind"] == "post"]
    posts2 = [e for e in n2 if e["kind"] == "post"]
    failures = []
    figures = {"cut_seconds": round(heal - cut, 1)}

    # Every POST to n1 in flight during the cut is answered within 5 s: 202 (committed before
    # the cut was felt) or 503 with Retry-After.
    during = [p for p in posts1 if p["end"] > cut and p["start"] < heal]
    slowest = max((p["end"] - p["start"] for p in during), default=0)
    unanswered = [p for p in during if p["status"] == 0]
    wrong = [p for p in during if p["status"] not in (202, 503) or (p["status"] == 503 and not p.get("retry_after"))]
    figures.update(n1_posts_during_cut=len(during), n1_503=sum(p["status"] == 503 for p in during),
                   n1_slowest_answer_s=round(slowest, 2), n1_unanswered=len(unanswered))
    if slowest > 5 or unanswered:
        failures.append(f"a POST to the cut node took {slowest:.1f} s ({len(unanswered)} unanswered); at most 5 s")
    if wrong:
        failures.append(f"{len(wrong)} answers to the cut node were neither 202 nor 503 with Retry-After: {wrong[:3]}")

    # /healthz answers throughout; /readyz says not ready from 5 s into the cut to the heal.
    health = [e for e in n1 if e["kind"] == "/healthz" and cut <= e["start"] < heal]
    ready = [e for e in n1 if e["kind"] == "/readyz" and cut + 5 <= e["start"] < heal]
    slowest_health = max((e["end"] - e["start"] for e in health), default=0)
    figures.update(healthz_during_cut=len(health), healthz_slowest_s=round(slowest_health, 3),
                   readyz_ready_during_cut=sum(e["status"] == 200 for e in ready))
    if not health or any(e["status"] != 200 for e in health) or slowest_health > 1:
        failures.append(f"/healthz during the cut: {[e['status'] for e in health if e['status'] != 200][:5]}, slowest {slowest_health:.2f} s")
    if any(e["status"] == 200 for e in ready) or any(e["status"] == 0 for e in ready):
        failures.append("/readyz said ready (or did not answer) during the cut")
    first_not_ready = min((e["end"] for e in n1 if e["kind"] == "/readyz" and e["start"] >= cut and e["status"] == 503), default=None)
    if first_not_ready is not None:
        figures["readyz_not_ready_after_s"] = round(first_not_ready - cut, 2)

    # The other node keeps at least half its throughput.
    before = rate(posts2, times["start"] + 2, cut)
    cut_rate = rate(posts2, cut, heal)
    figures.update(n2_reports_per_s_before=round(before), n2_reports_per_s_during_cut=round(cut_rate),
                   n1_reports_per_s_before=round(rate(posts1, times["start"] + 2, cut)))
    if cut_rate < before / 2:
        failures.append(f"n2 fell from {before:.0f} to {cut_rate:.0f} reports/s during the cut")
    slowest_n2 = max((p["end"] - p["start"] for p in posts2 if cut <= p["start"] < heal), default=0)
    figures["n2_slowest_post_during_cut_s"] = round(slowest_n2, 2)
    acks = sorted(p["end"] for p in posts2 if p["status"] == 202 and cut <= p["end"] < heal)
    gaps = [b - a for a, b in zip([cut] + acks, acks + [heal])]
    figures["n2_longest_gap_without_202_s"] = round(max(gaps), 2)
    figures["hold"] = times.get("hold", False)

    # n1 acknowledges again within 3 s of the heal.
    back = min((p["end"] for p in posts1 if p["status"] == 202 and p["start"] >= heal), default=None)
    if back is None:
        failures.append("n1 acknowledged nothing after the heal")
    else:
        figures["n1_first_202_after_heal_s"] = round(back - heal, 2)
        if back - heal > 3:
            failures.append(f"n1 acknowledged again {back - heal:.1f} s after the heal; at most 3 s")
        figures["n1_reports_per_s_after_heal"] = round(rate(posts1, back, times["end"]))

    # Every acknowledged id is in PostgreSQL.
    with open(os.path.join(work, "stored.txt")) as lines:
        stored = set(line.strip() for line in lines if line.strip())
    ids = acked(os.path.join(work, "n1")) + acked(os.path.join(work, "n2"))
    lost = [i for i in ids if i not in stored]
    figures.update(acknowledged=len(ids), stored=len(stored), lost=len(lost))
    if lost:
        failures.append(f"{len(lost)} acknowledged ids are not in PostgreSQL, e.g. {lost[:3]}")

    print(json.dumps(figures, indent=1))
    for failure in failures:
        print("FAIL:", failure)
    print("partition check:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), int(sys.argv[6]))
    elif sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    else:
        sys.exit(__doc__)
