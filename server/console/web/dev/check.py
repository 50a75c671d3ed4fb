#!/usr/bin/python3
"""Browser check of the console against dev/serve.mjs: opens every view in headless Chromium,
checks the data-test contract, clicks through the graph, fails on any browser console error.
  python3 dev/check.py [--base http://127.0.0.1:8765] [--shots /tmp/console-shots]
Needs chromium, chromium-driver and python3-selenium (Debian packages)."""
import argparse, json, os, sys, time
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

COMP = "3f1c9a2be07d4c55a8e1f0c2d9b6a7e4c1d2f3a4b5c6d7e8f9a0b1c2d3e4f5a6"
INPLACE = "a7d2e4f6081b3c5d7e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f"


def driver(width=1440, height=1000):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}", "--disable-gpu"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


class Check:
    def __init__(self, d, shots, allowed=()):
        self.d, self.shots, self.allowed, self.failures = d, shots, allowed, []

    def css(self, sel):
        return self.d.find_elements(By.CSS_SELECTOR, sel)

    def wait(self, sel, timeout=20):
        WebDriverWait(self.d, timeout).until(lambda d: d.find_elements(By.CSS_SELECTOR, sel))
        return self.css(sel)[0]

    def ok(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)

    def shot(self, name):
        self.d.save_screenshot(os.path.join(self.shots, f"{name}.png"))

    def logs(self, where):
        errs = [l for l in self.d.get_log("browser") if l["level"] in ("SEVERE", "WARNING")
                and not any(a in l["message"] for a in self.allowed)]
        self.ok(not errs, f"no browser console errors ({where}) {json.dumps(errs)[:400] if errs else ''}")


def check_auth(base, shots):
    """Against `serve.mjs --metrics-token m3tr1cs --tenant-token t3nant`: both forms, then the page."""
    d = driver()
    # Chrome logs every 401 answer as a network error: those are expected here.
    c = Check(d, shots, allowed=("favicon", "401 (Unauthorized)"))
    try:
        d.get(base + "/console/#/overview")
        form = c.wait("[data-test=token-form]")
        c.ok(form.get_attribute("data-needs") == "metrics_token", "asks for the metrics token first")
        c.ok(len(c.css("[data-test=token-form]")) == 1, "one form for concurrent 401s")
        c.shot("token-form")
        form.find_element(By.CSS_SELECTOR, "input").send_keys("wrong")
        form.find_element(By.CSS_SELECTOR, "[data-test=token-submit]").click()
        c.wait("[data-test=token-refused]")
        c.ok(True, "a refused token asks again")
        form = c.css("[data-test=token-form]")[0]
        form.find_element(By.CSS_SELECTOR, "input").send_keys("m3tr1cs" + Keys.ENTER)
        WebDriverWait(d, 10).until(lambda d: c.css("[data-test=token-form][data-needs=tenant_token]"))
        c.ok(True, "then the tenant token")
        form = c.css("[data-test=token-form]")[0]
        form.find_element(By.CSS_SELECTOR, "input").send_keys("t3nant" + Keys.ENTER)
        c.ok(c.wait("[data-test=health]").text == "serving", "overview after both tokens")
        c.ok(d.execute_script("return sessionStorage.getItem('kiln.metrics_token') + ' ' + sessionStorage.getItem('kiln.tenant_token')") == "m3tr1cs t3nant", "tokens in sessionStorage")
        d.refresh()
        c.wait("[data-test=health]")
        c.ok(not c.css("[data-test=token-form]"), "no form after a reload")
        c.logs("auth")
    finally:
        d.quit()
    return c.failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="http://127.0.0.1:8765")
    ap.add_argument("--auth", help="also check the token forms against this dev server (started with tokens)")
    ap.add_argument("--shots", default="/tmp/console-shots")
    args = ap.parse_args()
    os.makedirs(args.shots, exist_ok=True)
    failures = check_auth(args.auth, args.shots) if args.auth else []
    d = driver()
    c = Check(d, args.shots, allowed=("favicon",))
    base = args.base + "/console/"
    try:
        # Overview
        d.get(base)
        health = c.wait("[data-test=health]")
        c.ok(health.text == "serving", f"health is 'serving' ({health.text!r})")
        c.ok(len(c.css("[data-test=tier]")) == 3, "3 tier rows")
        WebDriverWait(d, 10).until(lambda d: all(e.get_attribute("data-points") == "240" for e in c.css("[data-test=chart]")))
        charts = {e.get_attribute("data-chart"): e.get_attribute("data-points") for e in c.css("[data-test=chart]")}
        c.ok(set(charts) == {"requests", "latency", "compiles", "executions", "memory", "evictions"}, f"charts {charts}")
        c.ok(c.css("[data-test=server-version]")[0].text.endswith("0.9.0"), "version in the top bar")
        time.sleep(0.5)
        c.shot("overview")
        c.logs("overview")

        # Functions
        d.get(base + "#/functions")
        c.wait("[data-test=function-row]")
        rows = c.css("[data-test=function-row]")
        c.ok(len(rows) == 5, f"5 function rows ({len(rows)})")
        c.ok(rows[0].get_attribute("data-id") == COMP, "newest first")
        c.css("th[data-sort=calls]")[0].click()
        c.ok(c.css("[data-test=function-row]")[0].get_attribute("data-id") == COMP, "sorted by calls, most first")
        c.css("th[data-sort=calls]")[0].click()
        c.ok(c.css("[data-test=function-row]")[0].get_attribute("data-id").startswith("0c0ffee"), "sorted by calls, fewest first")
        c.shot("functions")
        search = c.css("[data-test=function-search]")[0]
        search.send_keys("(?, 128)")
        c.ok(len(c.css("[data-test=function-row]")) == 2, "search by signature")
        search.clear(); search.send_keys(Keys.BACKSPACE)
        search.send_keys("a7d2e4")
        rows = c.css("[data-test=function-row]")
        c.ok(len(rows) == 1 and rows[0].get_attribute("data-id") == INPLACE, "search by id")
        rows[0].click()
        c.wait("[data-test=graph-node]")
        c.ok(d.current_url.endswith("#/function/" + INPLACE), "row click opens the function")
        WebDriverWait(d, 10).until(lambda d: c.css(".gv[data-ready=true]"))
        c.ok(len(c.css("path.gv-edge-destroyed")) == 2, "2 destroyed (red) edges")
        c.ok(len(c.css("path.gv-edge-view")) == 3, "3 view (dashed blue) edges")
        c.ok(c.css("[data-test=node-count]")[0].text == "10", "node-count 10")
        c.ok("IncSubtensor" in c.css("[data-test=dprint]")[0].text, "dprint shown")
        c.shot("function-inplace")
        c.logs("functions + in-place")

        # Composite
        d.get(base + "#/function/" + COMP)
        c.wait(".gv[data-ready=true]")
        nodes = c.css("[data-test=graph-node]")
        c.ok(len(nodes) == 5, f"5 nodes drawn ({len(nodes)})")
        c.ok(c.css("[data-test=node-count]")[0].text == "5", "node-count 5")
        c.css('[data-test=graph-node][data-node-id="3"]')[0].click()
        props = c.wait("[data-test=node-props]")
        c.ok("Sum" in props.text and "acc_dtype: float64" in props.text and "total" in props.text, "node-props of Sum")
        props.find_elements(By.CSS_SELECTOR, "[data-test=node-link]")[0].click()
        WebDriverWait(d, 5).until(lambda d: c.css("[data-test=node-props]")[0].get_attribute("data-node-id") == "2")
        c.ok(True, "input link goes to the Composite")
        c.shot("function-composite")
        c.css('[data-test=graph-node][data-node-id="2"] [data-test=graph-expand]')[0].click()
        WebDriverWait(d, 5).until(lambda d: c.css('[data-test=graph-node][data-node-id="2/5"]'))
        c.ok(len(c.css("[data-test=graph-node]")) == 10, f"expanded: 10 nodes ({len(c.css('[data-test=graph-node]'))})")
        c.ok(c.css("[data-test=node-count]")[0].text == "10", "node-count 10 after expanding")
        c.css('[data-test=graph-node][data-node-id="2/4"]')[0].click()
        c.ok("exp" in c.wait("[data-test=node-props]").text, "inner node props")
        c.shot("function-composite-expanded")
        c.css('[data-test=graph-cluster][data-node-id="2"] [data-test=graph-collapse]')[0].click()
        WebDriverWait(d, 5).until(lambda d: len(c.css("[data-test=graph-node]")) == 5)
        c.ok(True, "collapsed again")
        gs = c.css("[data-test=graph-search]")[0]
        gs.send_keys("sqr")
        WebDriverWait(d, 5).until(lambda d: c.css(".gv-match"))
        c.ok([e.get_attribute("data-node-id") for e in c.css(".gv-match")] == ["4"], "search highlights sqr")
        c.css("[data-test=graph-fit]")[0].click()
        c.logs("composite")

        # Not found
        d.get(base + "#/function/deadbeef")
        c.ok("no such function" in c.wait("[data-test=not-found]").text.lower(), "not found")
        c.shot("not-found")

        # Sessions
        d.get(base + "#/sessions")
        c.wait("[data-test=session-row]")
        c.ok(len(c.css("[data-test=session-row]")) == 3, "3 sessions")
        c.ok(len(c.css("[data-test=variable-row]")) == 4, "4 variables")
        c.shot("sessions")
        # the only errors allowed: the expected 404 of the unknown function
        c.allowed = ("favicon", "deadbeef")
        c.logs("sessions")
    finally:
        d.quit()
    failures += c.failures
    print("FAILED: " + "; ".join(failures) if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
