#!/usr/bin/python3
"""Times the graph view on big graphs: from navigation start until the view is drawn and
interactive (.gv[data-ready=true]); then the time to open a group or chain, three levels down.
  python3 dev/bench.py [--runs 3] [--base http://127.0.0.1:8765] [--shots DIR] TARGET...
TARGET: a shape of dev/serve.mjs's generated graphs (blocks: 100,000 nodes; chain: 100,000 steps
deep; wide: 20,000 branches; see dev/gen-graph.mjs), `all` (the three), or a URL, e.g.
http://127.0.0.1:8765/console/#/function/<id> or file:///tmp/viewer-100k.html.
Each run is a new browser. With --shots, screenshots of the first view and of each opening."""
import argparse, os, re, sys, time, urllib.request
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
sys.path.insert(0, os.path.dirname(__file__))
from check import driver

SHAPES = {  # the ids dev/serve.mjs answers with a generated graph
    "blocks": "b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b",
    "chain": "c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1",
    "wide": "3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e",
}

# The chain/group box to open: at first the one of most nodes (by the number in its title), then
# the first one drawn inside the frame of the one just opened (arguments[0]: its key).
PICK = """
const boxes = [...document.querySelectorAll('[data-test=graph-node][data-kind=chain], [data-test=graph-node][data-kind=group]')];
if (arguments[0]) {
  const frame = document.querySelector(`[data-test=graph-cluster][data-node-id="${CSS.escape(arguments[0])}"] rect`);
  if (!frame) return null;
  const f = frame.getBoundingClientRect();
  return boxes.find(b => { const r = b.getBoundingClientRect(); return r.left >= f.left && r.right <= f.right && r.top >= f.top && r.bottom <= f.bottom; }) || null;
}
const n = b => Math.max(0, ...(b.querySelector('.gv-title').textContent.match(/[0-9][0-9,]*/g) || []).map(s => +s.replace(/,/g, '')));
return boxes.sort((a, b) => n(b) - n(a))[0] || null;
"""
CLICK = ("arguments[0].querySelector('[data-test=graph-expand]').dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, button: 0}));"
         "window.dispatchEvent(new PointerEvent('pointerup', {button: 0}));")


def shot(d, path):
    d.execute_script("document.querySelector('.gv').scrollIntoView()")
    time.sleep(0.3)
    d.save_screenshot(path)


def run(url, shots=None, levels=3):
    """One cold load of url: {'ready': ms after navigation start, 'view': ms of the graph view, 'boxes', 'opens': [(label, s, boxes)]}."""
    d = driver()
    try:
        d.get(url)
        WebDriverWait(d, 300, poll_frequency=0.05).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".gv[data-ready=true]"))
        gv = d.find_element(By.CSS_SELECTOR, ".gv")
        count = lambda: int(d.find_element(By.CSS_SELECTOR, "[data-test=node-count]").text)
        out = {"ready": int(gv.get_attribute("data-ready-at")), "view": int(gv.get_attribute("data-ready-ms")), "boxes": count(), "opens": []}
        if shots:
            shot(d, f"{shots}-0.png")
        opened = None
        for level in range(levels):
            box = d.execute_script(PICK, opened)
            if not box:
                break
            opened = box.get_attribute("data-node-id")
            label = box.find_element(By.CSS_SELECTOR, ".gv-title").get_attribute("textContent")
            clusters = len(d.find_elements(By.CSS_SELECTOR, "[data-test=graph-cluster]"))
            t1 = time.time()
            d.execute_script(CLICK, box)
            WebDriverWait(d, 300, poll_frequency=0.02).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, ".gv[data-ready=true]") and
                len(d.find_elements(By.CSS_SELECTOR, "[data-test=graph-cluster]")) > clusters)
            out["opens"].append((label, time.time() - t1, count()))
            if shots:
                shot(d, f"{shots}-{level + 1}.png")
        errs = [l for l in d.get_log("browser") if l["level"] == "SEVERE"]
        if errs:
            out["errors"] = errs
        return out
    finally:
        d.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--base", default="http://127.0.0.1:8765")
    ap.add_argument("--shots", help="directory for screenshots (of the last run)")
    args = ap.parse_args()
    targets = [t for a in args.targets for t in (SHAPES if a == "all" else [a])]
    failed = False
    for t in targets:
        url = f"{args.base}/console/#/function/{SHAPES[t]}" if t in SHAPES else t
        name = t if t in SHAPES else re.sub(r"\W+", "-", t)[-40:]
        if t in SHAPES:  # dev/serve.mjs generates a graph at its first request: not to be timed
            urllib.request.urlopen(f"{args.base}/api/functions/{SHAPES[t]}").read()
        runs = []
        for i in range(args.runs):
            shots = os.path.join(args.shots, name) if args.shots and i == args.runs - 1 else None
            if shots:
                os.makedirs(args.shots, exist_ok=True)
            r = run(url, shots)
            runs.append(r)
            opens = "; ".join(f"open {label!r} {s:.2f} s -> {n} boxes" for label, s, n in r["opens"])
            print(f"{name} run {i + 1}: interactive {r['ready'] / 1000:.2f} s after navigation start "
                  f"(graph view {r['view'] / 1000:.2f} s), {r['boxes']} boxes; {opens}", flush=True)
            if r.get("errors"):
                failed = True
                print("  browser errors:", r["errors"])
        fmt = lambda xs: " / ".join(f"{x:.1f}" for x in sorted(xs))
        print(f"{name}: interactive {fmt(r['ready'] / 1000 for r in runs)} s; graph view {fmt(r['view'] / 1000 for r in runs)} s; "
              + "; ".join(f"opening level {k + 1}: {min(r['opens'][k][1] for r in runs):.2f}–{max(r['opens'][k][1] for r in runs):.2f} s"
                          for k in range(min(len(r['opens']) for r in runs))), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
