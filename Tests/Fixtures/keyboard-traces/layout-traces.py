#!/usr/bin/env python3
"""Writes the layout traces of this folder (the files with "windows"): keyboard notifications
as every window of an app hears them, with what each window's composer is laid out in (its
hosting view: frame and safe-area bottom, window coordinates), the hosting view's
keyboardLayoutGuide top (iOS 15+), where a correct app has the composer, and what the watchdog
must make of it. Tests/Fixtures/README.md says where the numbers come from.

    python3 Tests/Fixtures/keyboard-traces/layout-traces.py   # rewrites the six files
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def rect(x, y, w, h):
    return {"x": x, "y": y, "width": w, "height": h}


def keyboard(kind, begin, end, screen, local=True, duration=0.25):
    return {"notification": kind, "frame_begin": begin, "frame_end": end, "duration": duration, "curve": 7,
            "is_local": local, "keyboard_screen": screen}


def write(name, trace):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(trace, f, indent=1)
        f.write("\n")


def one_window(name, description, device, screen, window, container, composer, keyboard_frame, keyboard_mode, inset, stuck,
               sheet_when_shown=None, extra=None):
    """A window whose composer follows one docked keyboard up and down (plus `extra` steps)."""
    top = keyboard_frame["y"]
    below = dict(keyboard_frame, y=screen["height"])
    shown_container = sheet_when_shown or container
    shown_bottom = min(shown_container["safe_area_bottom"], top - window["frame"]["y"])

    def step(event, responder, bottom, height, mode, laid_out=None, guide=None):
        s = dict(event or {})
        s["first_responder"] = responder
        s["key"] = "main"
        w = {"composer_bottom": bottom, "guide_top": guide if guide is not None else bottom, "height": height, "owner": "thisWindow"}
        if mode:
            w["mode"] = mode
        if laid_out:
            w["container"] = laid_out
        s["windows"] = {"main": w}
        return s

    rest = container["safe_area_bottom"]
    steps = [
        step(None, None, rest, 0, None),
        step(keyboard("keyboardWillShow", below, keyboard_frame, "device"), "main", shown_bottom, keyboard_frame["height"], keyboard_mode,
             laid_out=sheet_when_shown),
        step(keyboard("keyboardDidShow", below, keyboard_frame, "device"), "main", shown_bottom, keyboard_frame["height"], keyboard_mode,
             laid_out=sheet_when_shown),
        step(keyboard("keyboardWillHide", keyboard_frame, below, "device"), None, rest, 0, "hidden", laid_out=container if sheet_when_shown else None),
        step(keyboard("keyboardDidHide", keyboard_frame, below, "device"), None, rest, 0, "hidden"),
    ]
    for s in extra or []:
        steps.append(s)
    write(name, {
        "description": description,
        "device": device,
        "screens": {"device": screen},
        "windows": [dict(window, id="main", screen="device", composer_height=composer, container=container, window_safe_area_inset=inset)],
        "steps": steps,
        "stuck_composer_reports": stuck,
    })


def main():
    iphone = {"model": "iPhone15,2", "os": "iOS", "os_version": "17.5", "idiom": "phone"}
    one_window(
        "iphone-composer-above-tab-bar.json",
        "iPhone 14 Pro (393x852), a chat screen inside a UITabBarController: its view controller's view spans the window, "
        "and its safe area ends above the tab bar (49 pt) and the home indicator (34 pt), at y 769. The composer (52 pt) sits "
        "there with the keyboard down, and on the keyboard's top edge (336 pt keyboard, y 516) with it up; the keyboard "
        "covers the tab bar. Judged against the window's safe area (818) it was 49 pt off on every tick with the keyboard down.",
        iphone, rect(0, 0, 393, 852), {"frame": rect(0, 0, 393, 852)},
        {"frame": rect(0, 0, 393, 852), "safe_area_bottom": 769}, 52, rect(0, 516, 393, 336), "docked", 34, 1)

    ipad11 = {"model": "iPad13,4", "os": "iPadOS", "os_version": "17.4", "idiom": "pad"}
    bar = rect(0, 1139, 834, 55)
    bar_below = rect(0, 1194, 834, 55)

    def bar_step(kind, begin, end, responder, height, mode, guide):
        s = keyboard(kind, begin, end, "device")
        s["first_responder"] = responder
        s["key"] = "main"
        s["windows"] = {"main": {"composer_bottom": 1124, "guide_top": guide, "height": height, "mode": mode, "owner": "thisWindow"}}
        return s

    one_window(
        "ipad-composer-above-toolbar-and-shortcut-bar.json",
        "iPad Pro 11\" portrait (834x1194), a navigation controller showing its toolbar (50 pt) over the home indicator (20 pt): "
        "the screen's safe area ends at y 1124, the composer sits there. A software keyboard (320 pt, y 874) lifts it to its top "
        "edge. Then a Magic Keyboard is attached: focusing the field shows only iPadOS's bare shortcut bar, reported as a 55 pt "
        "frame fully on screen at the bottom edge (y 1139) — mode hardware, not docked — and the composer stays on the toolbar, "
        "since the bar ends below the safe area (the keyboardLayoutGuide's top is the bar's, y 1139: a composer pinned to it is "
        "right too).",
        ipad11, {"x": 0, "y": 0, "width": 834, "height": 1194}, {"frame": rect(0, 0, 834, 1194)},
        {"frame": rect(0, 0, 834, 1194), "safe_area_bottom": 1124}, 52, rect(0, 874, 834, 320), "docked", 20, 1,
        extra=[bar_step("keyboardWillShow", bar_below, bar, "main", 55, "hardware", 1139),
               bar_step("keyboardDidShow", bar_below, bar, "main", 55, "hardware", 1139),
               bar_step("keyboardWillHide", bar, bar_below, None, 0, "hidden", 1124)])

    landscape = {"x": 0, "y": 0, "width": 1194, "height": 834}
    one_window(
        "ipad-form-sheet-composer.json",
        "iPad Pro 11\" landscape (1194x834), a compose form sheet (540x620, centred: x 327, y 107, its safe area ending at its "
        "bottom, y 727). The keyboard (398 pt, y 436) comes up and iPadOS moves the sheet up to y 24 (bottom 644): the composer "
        "belongs on the keyboard's top edge inside the sheet (436); down again, the sheet returns to y 107 and the composer to "
        "its bottom (727). Judged against the window it was 87 pt off with the keyboard down.",
        ipad11, landscape, {"frame": rect(0, 0, 1194, 834)},
        {"frame": rect(327, 107, 540, 620), "safe_area_bottom": 727}, 52, rect(0, 436, 1194, 398), "docked", 20, 1,
        sheet_when_shown={"frame": rect(327, 24, 540, 620), "safe_area_bottom": 644})

    air = {"model": "iPad13,16", "os": "iPadOS", "os_version": "17.4", "idiom": "pad"}
    one_window(
        "ipad-split-column-composer.json",
        "iPad Air landscape (1180x820), a UISplitViewController: the primary column is 320 pt wide, the secondary column's "
        "navigation controller shows a toolbar (50 pt) over the home indicator (20 pt), so the secondary view's safe area ends "
        "at y 750 — where its composer sits with the keyboard down — and the keyboard (398 pt, y 422) spans both columns.",
        air, {"x": 0, "y": 0, "width": 1180, "height": 820}, {"frame": rect(0, 0, 1180, 820)},
        {"frame": rect(320, 0, 860, 820), "safe_area_bottom": 750}, 52, rect(0, 422, 1180, 398), "docked", 20, 1)

    two_windows()
    external_display()


def scene_step(event, responder, key, windows):
    s = dict(event or {})
    s["first_responder"] = responder
    s["key"] = key
    s["windows"] = windows
    return s


def window_step(bottom, height=0, owner="thisWindow", mode=None):
    """One window's part of a step of the two-window traces."""
    d = {"composer_bottom": bottom, "guide_top": bottom, "height": height, "owner": owner}
    if mode:
        d["mode"] = mode
    return d


SCREEN = rect(0, 0, 1194, 834)
UP = rect(0, 481, 1194, 353)
DOWN = rect(0, 834, 1194, 353)


def two_windows():
    screen, up, down, w = SCREEN, UP, DOWN, window_step

    write("ipad-two-windows-side-by-side.json", {
        "description": "iPad Pro 11\" landscape (1194x834), two windows of this app side by side in Split View (597x834 each, "
                       "left at x 0, right at x 597), each a chat with its composer on the safe area's bottom (814). The user "
                       "types in the left window (keyboard 353 pt, y 481), then taps the right window's field: the keyboard stays "
                       "up and moves to it (a frame change), then hides. Every notification reaches both windows' drivers with "
                       "UIKeyboardIsLocalUserInfoKey true (it is per app): the window without the first responder must not take "
                       "the keyboard as its own (no keyboard_without_input, no composer mismatch there).",
        "device": {"model": "iPad13,4", "os": "iPadOS", "os_version": "17.4", "idiom": "pad"},
        "screens": {"device": screen},
        "windows": [
            {"id": "left", "screen": "device", "frame": rect(0, 0, 597, 834), "composer_height": 52,
             "container": {"frame": rect(0, 0, 597, 834), "safe_area_bottom": 814}, "window_safe_area_inset": 20},
            {"id": "right", "screen": "device", "frame": rect(597, 0, 597, 834), "composer_height": 52,
             "container": {"frame": rect(0, 0, 597, 834), "safe_area_bottom": 814}, "window_safe_area_inset": 20},
        ],
        "stuck_composer_reports": 2,
        "steps": [
            scene_step(None, None, "left", {"left": w(814), "right": w(814)}),
            scene_step(keyboard("keyboardWillShow", down, up, "device"), "left", "left",
                       {"left": w(481, 353, mode="docked"), "right": w(814, owner="anotherWindow")}),
            scene_step(keyboard("keyboardDidShow", down, up, "device"), "left", "left",
                       {"left": w(481, 353, mode="docked"), "right": w(814, owner="anotherWindow")}),
            scene_step(keyboard("keyboardWillChangeFrame", up, up, "device"), "right", "right",
                       {"left": w(814, owner="anotherWindow"), "right": w(481, 353, mode="docked")}),
            scene_step(keyboard("keyboardDidChangeFrame", up, up, "device"), "right", "right",
                       {"left": w(814, owner="anotherWindow"), "right": w(481, 353, mode="docked")}),
            scene_step(keyboard("keyboardWillHide", up, down, "device"), None, "right",
                       {"left": w(814), "right": w(814, mode="hidden")}),
            scene_step(keyboard("keyboardDidHide", up, down, "device"), None, "right",
                       {"left": w(814), "right": w(814, mode="hidden")}),
        ],
    })


def external_display():
    screen, up, down, w = SCREEN, UP, DOWN, window_step

    write("ipad-external-display-window.json", {
        "description": "iPad Pro 11\" (1194x834) with Stage Manager on an external display (1920x1080): one window of this app "
                       "full screen on the iPad, another on the external display (1180x820 at x 370, y 14 of that display). The "
                       "software keyboard (353 pt) is on the iPad's screen, the notification's object since iOS 16.1. Seen from "
                       "the external window its frame would end exactly on that window's bottom edge (481 - 14 + 353 = 820) and "
                       "pass for a docked keyboard over it. First the user types in the iPad window; then in the external "
                       "window's field, while the keyboard stays on the iPad: the external window is never covered, and the iPad "
                       "window, which no longer has the first responder, is not judged meanwhile.",
        "device": {"model": "iPad13,4", "os": "iPadOS", "os_version": "17.4", "idiom": "pad"},
        "screens": {"device": screen, "external": rect(0, 0, 1920, 1080)},
        "windows": [
            {"id": "ipad", "screen": "device", "frame": rect(0, 0, 1194, 834), "composer_height": 52,
             "container": {"frame": rect(0, 0, 1194, 834), "safe_area_bottom": 814}, "window_safe_area_inset": 20},
            {"id": "external", "screen": "external", "frame": rect(370, 14, 1180, 820), "composer_height": 52,
             "container": {"frame": rect(0, 0, 1180, 820), "safe_area_bottom": 820}, "window_safe_area_inset": 0},
        ],
        "stuck_composer_reports": 1,
        "steps": [
            scene_step(None, None, "ipad", {"ipad": w(814), "external": w(820)}),
            scene_step(keyboard("keyboardWillShow", down, up, "device"), "ipad", "ipad",
                       {"ipad": w(481, 353, mode="docked"), "external": w(820, owner="anotherScreen")}),
            scene_step(keyboard("keyboardDidShow", down, up, "device"), "ipad", "ipad",
                       {"ipad": w(481, 353, mode="docked"), "external": w(820, owner="anotherScreen")}),
            scene_step(keyboard("keyboardWillHide", up, down, "device"), None, "ipad",
                       {"ipad": w(814, mode="hidden"), "external": w(820)}),
            scene_step(keyboard("keyboardWillShow", down, up, "device"), "external", "external",
                       {"ipad": w(814, owner="anotherWindow"), "external": w(820, owner="anotherScreen")}),
            scene_step(keyboard("keyboardDidShow", down, up, "device"), "external", "external",
                       {"ipad": w(814, owner="anotherWindow"), "external": w(820, owner="anotherScreen")}),
            scene_step(keyboard("keyboardWillHide", up, down, "device"), None, "external",
                       {"ipad": w(814, mode="hidden"), "external": w(820)}),
        ],
    })


if __name__ == "__main__":
    main()
