#!/usr/bin/env python3
"""Writes the benchmark payloads next to this file: report1.json (one report) and batch100.json
(100 reports), as WatchdogKit would post them from a fleet running two releases of a mail app.

    python3 Tests/Benchmarks/payloads/generate.py      # deterministic (fixed seed)

Each report is one line of `"key": value` pairs (", " and ": " separators), so that
../unique-ids.lua, which rewrites every `"id": "<uuid>"`, gives each report a fresh id on every
request; session_id and install_id are UUIDs too but their keys don't match that pattern, so a
run posts many reports per session as a real fleet does. Times are written for 2026-11-20; the
benchmark scripts post copies moved by whole days to three days before today (lib.sh,
dated_payloads), never these files as they are.
"""
import json
import os
import random
import time
import uuid

rng = random.Random(14)
here = os.path.dirname(os.path.abspath(__file__))


def uid():
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


RELEASES = [({"version": "14.2.0", "build": "31245", "channel": "beta"}, 0.7),
            ({"version": "14.1.3", "build": "31102", "channel": "production"}, 0.3)]
DEVICES = [  # model, os, os_version, idiom, width, height
    ("iPhone15,2", "iOS", "18.1", "phone", 393, 852),
    ("iPhone16,1", "iOS", "18.2", "phone", 393, 852),
    ("iPhone14,7", "iOS", "17.6.1", "phone", 390, 844),
    ("iPhone12,8", "iOS", "17.5", "phone", 375, 667),
    ("iPad13,18", "iPadOS", "18.1", "pad", 820, 1180),
]
LOCALES = [("ja_JP", "ja-JP"), ("en_US", "en-US"), ("de_DE", "de-DE"), ("fr_FR", "fr-FR"), ("zh_CN", "zh-Hans")]
SCREENS = [("ComposeViewController", "composeToolbar"), ("ThreadViewController", "replyBar"),
           ("SearchViewController", "searchField"), ("InboxViewController", "filterBar")]
KINDS = [("view_frame_mismatch", 0.6), ("input_covered_by_keyboard", 0.15),
         ("keyboard_without_input", 0.1), ("interaction_lock", 0.15)]
NOTIFICATIONS = ["keyboardWillChangeFrame", "keyboardWillShow", "keyboardDidShow", "keyboardWillHide"]


def pick(weighted):
    r, total = rng.random(), 0.0
    for value, weight in weighted:
        total += weight
        if r < total:
            return value
    return weighted[-1][0]


# 30 sessions of 20 installs: a batch carries several reports of one session, as an outbox does.
installs = [(uid(), rng.choice(DEVICES), rng.choice(LOCALES), pick(RELEASES)) for _ in range(20)]
sessions = [(uid(), rng.choice(installs)) for _ in range(30)]


def report(n):
    session_id, (install_id, device, (locale, input_mode), release) = rng.choice(sessions)
    model, os_name, os_version, idiom, width, height = device
    screen, view = rng.choice(SCREENS)
    kind = pick(KINDS)
    keyboard_height = {"phone": 336 if locale == "ja_JP" else 291, "pad": 398}[idiom]
    keyboard_y = height - keyboard_height
    expected_y = keyboard_y - 44
    actual_y = expected_y + rng.choice([36, 44, 52, 87, 120])
    seconds = 1795300000 + n * 37 + rng.randint(0, 30)
    millis = rng.randint(0, 999)
    occurred = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % millis
    r = {
        "id": uid(),
        "kind": kind,
        "occurred_at": occurred,
        "app": "com.example.mail",
        "release": release,
        "device": {"model": model, "os": os_name, "os_version": os_version, "idiom": idiom, "locale": locale},
        "session_id": session_id,
        "install_id": install_id,
        "app_state": "active",
        "screen": screen,
        "window": {"x": 0, "y": 0, "width": width, "height": height},
    }
    notification = rng.choice(NOTIFICATIONS)
    keyboard = {"visible": notification != "keyboardWillHide",
                "frame": {"x": 0, "y": keyboard_y, "width": width, "height": keyboard_height},
                "mode": "docked", "height": keyboard_height, "animation_duration": 0.25,
                "animation_curve": 7, "input_mode": input_mode, "notification": notification}
    logs = ["[keyboard][tracker] %s: calculated height - %.1f" % (notification, keyboard_height),
            "[keyboard][tracker] frame end (0.0, %.1f, %.1f, %.1f)" % (keyboard_y, width, keyboard_height)]
    if kind == "interaction_lock":
        r["lock"] = {"duration_s": round(rng.uniform(10, 45), 1),
                     "flags": {"is_bar_pop_processing": True, "is_transitioning": rng.random() < 0.5,
                               "is_keyboard_animating": False}}
        logs.append("[navigation][watchdog] woof: interaction locked %.1f s after pop" % r["lock"]["duration_s"])
    else:
        r["view"] = {"name": view,
                     "expected": {"x": 0, "y": expected_y, "width": width, "height": 44},
                     "actual": {"x": 0, "y": actual_y, "width": width, "height": 44},
                     "tolerance": 1.0}
        logs.append("[keyboard][watchdog] woof: %s expected y %.1f actual y %.1f delta %.1f"
                    % (view, expected_y, actual_y, actual_y - expected_y))
    r["keyboard"] = keyboard
    r["action"] = {"auto_fixed": kind == "view_frame_mismatch" and rng.random() < 0.8, "test_crash": False}
    r["logs"] = logs
    r["attributes"] = {"experiment": rng.choice(["compose-v2", "control"]), "theme": rng.choice(["dark", "light"])}
    return r


def write(name, reports):
    lines = ",\n".join("  " + json.dumps(r, separators=(", ", ": "), ensure_ascii=False) for r in reports)
    with open(os.path.join(here, name), "w") as f:
        f.write('{"reports": [\n' + lines + "\n]}\n")


batch = [report(n) for n in range(101)]
write("report1.json", batch[:1])
write("batch100.json", batch[1:])
