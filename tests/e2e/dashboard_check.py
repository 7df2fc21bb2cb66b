"""Runs every query of a Grafana dashboard against a Prometheus: each must parse and return at
least one series (queries of series the setup cannot have, such as GPU-only ones, must parse).
Variables are substituted from a JSON object; without "pool" (a setup with no BudgetPool), the
pool row's queries must parse and may be empty. Asks every 2 s for up to 3 minutes (rate() and
deriv() need a few samples; the trial panels answer only while trials run, the probe panels once the
probe phase has figures): a query passes once it has answered with series, then it reports.

  python3 dashboard_check.py DASHBOARD.json http://127.0.0.1:9090 '{"namespace": ..., ...}'
"""
import json, os, sys, time, urllib.parse, urllib.request

dashboard, prom = json.load(open(sys.argv[1])), sys.argv[2]
values = {"objective": "validation_accuracy", "__range": "10m", "__rate_interval": "1m",
          "__interval": "15s"}
given = json.loads(sys.argv[3])
values.update(given)
# Series (names or name prefixes) whose queries must parse here and may be empty, with why: the
# trainer's NVML series always; DCGM's too when the caller has no DCGM stand-in (GPU_ONLY_EXTRA,
# comma-separated); the BudgetPool row's when the caller names no pool (its setup has none).
may_be_empty = {"budgetsweep_trainer_accelerator_utilization_ratio": "needs a GPU with NVML"}
may_be_empty.update((name, "needs a GPU")
                    for name in filter(None, os.environ.get("GPU_ONLY_EXTRA", "").split(",")))
if "pool" not in given:
    values["pool"] = "no-pool"
    may_be_empty["budgetsweep_pool_"] = "no BudgetPool in this setup"

def why_empty(text):
    return next((why for name, why in may_be_empty.items() if name in str(text)), None)

def substitute(text):
    for name in sorted(values, key=len, reverse=True):
        text = text.replace("${" + name + "}", values[name]).replace("$" + name, values[name])
    assert "$" not in text, f"unsubstituted variable in {text}"
    return text

def get(path, params):
    url = prom + path + "?" + urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)

checks = []  # (what, kind, text)
for panel in dashboard["panels"]:
    for target in panel.get("targets", []):
        checks.append((f'panel "{panel["title"]}" {target["refId"]}', "query", substitute(target["expr"])))
for var in dashboard["templating"]["list"]:
    if var["type"] != "query":
        continue
    q = var["query"]["query"]
    assert q.startswith("label_values(") and q.endswith(")"), q
    selector, label = q[len("label_values("):-1].rsplit(",", 1)
    checks.append((f'variable ${var["name"]}', "series", (substitute(selector.strip()), label.strip())))

def run(check):
    what, kind, text = check
    if kind == "query":
        r = get("/api/v1/query", {"query": text})
        if r.get("status") != "success":
            return False, f'{r.get("errorType")}: {r.get("error")}'
        n = len(r["data"]["result"])
        return n > 0, f"{n} series"
    selector, label = text
    r = get("/api/v1/series", {"match[]": selector, "start": time.time() - 600})
    if r.get("status") != "success":
        return False, f'{r.get("errorType")}: {r.get("error")}'
    found = sorted({s[label] for s in r["data"] if label in s})
    return bool(found), f"{label} = {found}"

deadline = time.time() + 180
answered = {}  # check index -> the first answer with series
while True:
    latest = [(c, *run(c)) for c in checks]
    for i, result in enumerate(latest):
        if result[1]:
            answered.setdefault(i, result)
    results = [answered.get(i, result) for i, result in enumerate(latest)]
    pending = [r for r in results if not r[1] and not why_empty(r[0][2])]
    if not pending or time.time() > deadline:
        break
    time.sleep(2)

failed = 0
for (what, kind, text), ok, detail in results:
    why = why_empty(text)
    parsed = not detail.startswith(("bad_data", "execution", "None"))
    if ok:
        print(f"ok   {what}: {detail}")
    elif why and parsed:
        print(f"ok   {what}: parses; {detail} ({why})")
    else:
        failed += 1
        print(f"FAIL {what}: {detail}\n       | {text}")
print(f"{len(results)} checks, {failed} failed")
sys.exit(1 if failed else 0)
