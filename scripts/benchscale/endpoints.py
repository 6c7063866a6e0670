"""Request every GET endpoint of a running pricewatch once, in turn.

    python3 endpoints.py BASE [SKIP_PATH ...]

The endpoints are the GET paths of the daemon's own /openapi.yaml (the
description a test checks against the route table), so a route added
later is requested too; a path template gets a real value (an offer key
from /v1/offers, a static file), the endpoints that need a parameter get
one. SKIP_PATH leaves a path out (the caller measured it already). Prints
one JSON line per request: path, url, status (0: no answer, with the
error), seconds to the last byte, bytes. The body is read in chunks and
dropped, so the client's memory does not grow with it.
"""
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

base, skip = sys.argv[1], set(sys.argv[2:])

# Query parameters an endpoint needs (or is measured with) in issue 20.
QUERY = {
    "/v1/best": "workload=lora-7b",
    "/v1/history": "card=RTX-4090&workload=lora-7b",
    "/v1/offers": "limit=5",
    "/v1/daemon/proof": "challenge=" + "ab" * 16,
}


def get(url):
    t = time.monotonic()
    n = 0
    try:
        with urllib.request.urlopen(url, timeout=600) as r:
            status = r.status
            while chunk := r.read(1 << 20):
                n += len(chunk)
        err = ""
    except urllib.error.HTTPError as e:
        status, err = e.code, ""
        n = len(e.read())
    except Exception as e:  # an empty reply, a reset, a timeout
        status, err = 0, f"{type(e).__name__}: {e}"
    return status, time.monotonic() - t, n, err


def body(url):
    with urllib.request.urlopen(url, timeout=600) as r:
        return r.read()


spec = body(base + "/openapi.yaml").decode()
# paths are two-space-indented keys under "paths:", methods four spaces.
paths, cur = [], None
for line in spec.splitlines():
    if m := re.match(r"^  (/\S*):\s*$", line):
        cur = m.group(1)
    elif cur and re.match(r"^    get:", line):
        paths.append(cur)
    elif line and not line.startswith(" "):
        cur = None

key = json.loads(body(base + "/v1/offers?limit=1"))
key = (key.get("offers") or key.get("items") or [{}])[0].get("key", "")
for p in paths:
    if p in skip:
        continue
    u = p.replace("{file}", "app.js").replace("{key}", urllib.parse.quote(key, safe=""))
    if p in QUERY:
        u += "?" + QUERY[p]
    status, secs, n, err = get(base + u)
    out = {"path": p, "url": u, "status": status, "s": round(secs, 3), "bytes": n}
    if err:
        out["error"] = err
    print(json.dumps(out), flush=True)
