#!/usr/bin/python3
"""The web GUI of claim2core-rest driven in headless Chromium (Debian's chromium + chromium-driver
through python3-selenium) against a private claim2cored and the fake vLLM process, as a person
would use it: enter the token, open New Node Policy, fill in the seed's fields, preview (read-only:
the EngineCore threads), save, see the intent turn Applied and the matched threads in the task
view, open a thread's lineage, delete the policy through the confirmation dialog, save a policy that
does not select the node and see the daemon's warning (issue 47). Screenshots go
to SCREENSHOT_DIR (docs/gui/ holds the committed ones). Exit 77 (ctest skip) without root, bpffs,
chromium, chromedriver or selenium.

usage: rest_gui_test.py CLAIM2CORED CLAIM2CORE_REST FAKE_VLLM SCREENSHOT_DIR
"""
import os
import shutil
import sys
import tempfile
import time

from c2c_it import checker, require_bpf
from rest_env import NODE, TOKENS, RestEnv

DAEMON, REST, FAKE, SHOTS = sys.argv[1:5]
require_bpf("BPF maps, bpffs pins")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("SKIP: python3-selenium is not installed")
    sys.exit(77)
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
if not CHROMIUM or not DRIVER:
    print("SKIP: chromium or chromium-driver is not installed")
    sys.exit(77)

failures = []


def settled(fn):
    """fn() once the page holds still: it re-renders its tables on every change event, so an
    element found a moment ago may be gone; look it up again."""
    for _ in range(50):
        try:
            return fn()
        except StaleElementReferenceException:
            time.sleep(0.1)
    return fn()


def click(find):
    return settled(lambda: find().click())


check = checker(failures)


os.makedirs(SHOTS, exist_ok=True)
env = RestEnv(DAEMON, REST, FAKE, tag="rest-gui")
profile = tempfile.mkdtemp(prefix="c2c-rest-gui-chromium-")
browser = None
try:
    env.start()
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
              f"--user-data-dir={profile}", "--window-size=1400,1000"):
        opts.add_argument(a)
    browser = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    wait = WebDriverWait(browser, 30, poll_frequency=0.2, ignored_exceptions=[StaleElementReferenceException])
    q = lambda css: browser.find_element(By.CSS_SELECTOR, css)  # noqa: E731
    qs = lambda css: browser.find_elements(By.CSS_SELECTOR, css)  # noqa: E731

    browser.get(f"http://127.0.0.1:{env.port}/")
    q("#token").send_keys(TOKENS["admin"][0] + "\t")
    wait.until(lambda b: q("#node").text == NODE)
    check(q("#count-policies").text == "0", "the page loads with the token: node name, no policy")
    wait.until(lambda b: q("#live").text == "live")
    check(True, "the event stream is connected (badge 'live')")

    # New Node Policy: the seed's fields.
    q("#new-policy").click()
    form = q("#policy-form")
    form.find_element(By.NAME, "nodeNames").send_keys(NODE)
    form.find_element(By.NAME, "commandRegex").send_keys("^EngineCore(_DP[0-9]+)?$")
    for name, value in (("priority", "1"), ("executionTime", "2000000")):
        f = form.find_element(By.NAME, name)
        f.clear()
        f.send_keys(value)
    q("[data-add=selector]").click()  # an empty label row is dropped on submit, as in the original
    q("#preview-button").click()
    wait.until(lambda b: q("#preview").is_displayed())
    preview = q("#preview").text
    check(all(str(t) in preview for t in env.engines) and "read-only" in preview,
          f"preview lists our EngineCore TIDs {env.engines} before saving")
    check(q("#count-policies").text == "0", "preview saved nothing")
    browser.save_screenshot(os.path.join(SHOTS, "1-new-policy-preview.png"))

    q("#save").click()
    wait.until(lambda b: not q("#form-panel").is_displayed())
    wait.until(lambda b: any(r.get_attribute("data-state") == "Applied" for r in qs("#intents tbody tr")))
    row = settled(lambda: [r.text for r in qs("#intents tbody tr") if r.get_attribute("data-state") == "Applied"][0])
    check("Applied" in row and "read back from the pinned map" in row, f"the intent turns Applied with its reason: {row!r}")
    wait.until(lambda b: {int(r.get_attribute("data-tid")) for r in qs("#tasks tbody tr[data-tid]")} >= set(env.engines))
    wait.until(lambda b: "yes" in q(f"#tasks tbody tr[data-tid='{env.engines[-1]}']").text)
    task_rows = settled(lambda: {int(r.get_attribute("data-tid")): r.text for r in qs("#tasks tbody tr[data-tid]")})
    check(all("EngineCore" in task_rows[t] and "yes" in task_rows[t] for t in env.engines)
          and env.threads["api_server"] not in task_rows, f"the task view shows the matched threads in the map: {task_rows}")
    policy_text = settled(lambda: [r.text for r in qs("#policies tbody tr[data-id]")])
    check(len(policy_text) == 1 and "^EngineCore(_DP[0-9]+)?$" in policy_text[0] and "2000000" in policy_text[0],
          "Saved Node Policies lists it")
    click(lambda: q(f"#tasks tbody tr[data-tid='{env.engines[0]}'] button"))
    wait.until(lambda b: q("#lineage").is_displayed() and "EngineCore" in q("#lineage").text)
    check(f"tid {env.engines[0]}" in q("#lineage").text and "exact-tid" in q("#lineage").text,
          f"lineage of the thread: {q('#lineage').text!r}")
    browser.save_screenshot(os.path.join(SHOTS, "2-intent-applied-tasks.png"))

    # Edit: the form comes back filled in.
    click(lambda: q("#policies tbody tr[data-id] button.edit"))
    check(q("#policy-form").find_element(By.NAME, "commandRegex").get_attribute("value") == "^EngineCore(_DP[0-9]+)?$",
          "Edit opens the form with the policy's fields")
    q("#cancel").click()

    # Delete, through the confirmation dialog; Cancel first keeps it.
    click(lambda: q("#policies tbody tr[data-id] button.delete"))
    wait.until(lambda b: q("#confirm").is_displayed())
    browser.save_screenshot(os.path.join(SHOTS, "3-delete-confirm.png"))
    q("#confirm button[value=cancel]").click()
    time.sleep(0.5)
    check(len(qs("#policies tbody tr[data-id]")) == 1, "Cancel in the dialog keeps the policy")
    click(lambda: q("#policies tbody tr[data-id] button.delete"))
    wait.until(lambda b: q("#confirm").is_displayed())
    q("#confirm-ok").click()
    wait.until(lambda b: len(qs("#policies tbody tr[data-id]")) == 0 and len(qs("#intents tbody tr[data-id]")) == 0)
    check(True, "Delete in the dialog removes the policy and its intent")
    s, b, _ = env.request("GET", "/api/v1/node-scheduling-policies/self")
    check(s == 200 and b["data"]["policies"] == [], "the REST API agrees: no policy left")

    # A policy whose label selector leaves this node out has no intent: the save says why (issue 47).
    q("#new-policy").click()
    q("#policy-form").find_element(By.NAME, "commandRegex").send_keys("^nothing$")
    q("[data-add=selector]").click()
    key, value = qs("#selectors .rows .row")[-1].find_elements(By.TAG_NAME, "input")
    key.send_keys("zone")
    value.send_keys("nowhere")
    q("#save").click()
    wait.until(lambda b: q("#notice").is_displayed())
    check("node not selected" in q("#notice").text, f"the save's warning is shown: {q('#notice').text!r}")
    logs = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    check(not logs, f"no browser console errors (CSP violations included): {logs}")
except Exception as e:  # a timeout in a wait: say where, keep a screenshot
    check(False, f"{type(e).__name__}: {e}")
    if browser:
        browser.save_screenshot(os.path.join(SHOTS, "failure.png"))
finally:
    if browser:
        browser.quit()
    shutil.rmtree(profile, ignore_errors=True)
    env.stop()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
