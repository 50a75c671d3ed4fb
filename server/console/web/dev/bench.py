#!/usr/bin/python3
"""Times the graph view on a generated graph: from navigation start until the view is drawn and
interactive (.gv[data-ready=true]); then the time to open a group.
  python3 dev/bench.py URL      e.g. http://127.0.0.1:8765/console/#/function/b16b...  or file:///tmp/viewer-100k.html"""
import sys, time
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
sys.path.insert(0, __import__("os").path.dirname(__file__))
from check import driver

d = driver()
try:
    url = sys.argv[1]
    t0 = time.time()
    d.get(url)
    WebDriverWait(d, 300, poll_frequency=0.05).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".gv[data-ready=true]"))
    wall = time.time() - t0
    gv = d.find_element(By.CSS_SELECTOR, ".gv")
    print(f"interactive at {gv.get_attribute('data-ready-at')} ms after navigation start "
          f"(graph view itself: {gv.get_attribute('data-ready-ms')} ms; selenium wall {wall:.2f} s); "
          f"{d.find_element(By.CSS_SELECTOR, '[data-test=node-count]').text} boxes drawn")
    if len(sys.argv) > 2:
        d.execute_script("document.querySelector('.gv').scrollIntoView()")
        time.sleep(0.3)
        d.save_screenshot(sys.argv[2].replace(".png", "-initial.png"))
    for kind in ("group", "chain"):
        els = d.find_elements(By.CSS_SELECTOR, f"[data-test=graph-node][data-kind={kind}]")
        if not els:
            continue
        t1 = time.time()
        d.execute_script("arguments[0].querySelector('[data-test=graph-expand]').dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, button: 0})); window.dispatchEvent(new PointerEvent('pointerup', {button: 0}));", els[0])
        WebDriverWait(d, 300, poll_frequency=0.05).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".gv[data-ready=true]") and d.find_elements(By.CSS_SELECTOR, "[data-test=graph-cluster]"))
        print(f"opening a {kind}: {time.time() - t1:.2f} s; now {d.find_element(By.CSS_SELECTOR, '[data-test=node-count]').text} boxes")
        break
    if len(sys.argv) > 2:
        d.execute_script("document.querySelector('.gv').scrollIntoView()")
        time.sleep(0.3)
        d.save_screenshot(sys.argv[2])
    errs = [l for l in d.get_log("browser") if l["level"] == "SEVERE"]
    print("browser errors:", errs)
finally:
    d.quit()
