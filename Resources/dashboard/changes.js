// One refresh rule for every view: draw again only when the server's answer changed.

/** `draw` wrapped to run only when its data differs from what it last drew, so the 30-second
 * refresh redraws nothing (scroll, focus, an open `<details>` stay) while the data is the
 * same. `forget()` makes the next call draw whatever it gets (after an error was shown). */
export function whenChanged(draw) {
  let last = null;
  const update = (...data) => {
    const key = JSON.stringify(data);
    if (key === last) return;
    last = key;
    draw(...data);
  };
  update.forget = () => { last = null; };
  return update;
}
