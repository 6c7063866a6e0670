"""The peer of scripts/bench-scale: gpuhunt's own catalog query over the
catalog pricewatch holds (its export, in gpuhunt's v2 layout), timed
with the read of the file, as gpuhunt does it with GPUHUNT_CATALOG_DIR:
every query reads and parses the provider's CSV. Then the cheapest
offer per GPU name, on-demand and spot: the best-per-GPU answer.

    python3 gpuhunt_best.py DIR PROVIDER ROUNDS

gpuhunt must be importable (installed, or PYTHONPATH=<gpuhunt>/src).
Prints one JSON object: every round's milliseconds, items and GPU names.
"""

import json
import os
import sys
import time

catalog_dir, provider, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ["GPUHUNT_CATALOG_DIR"] = catalog_dir
import gpuhunt  # noqa: E402  (after the variable it reads)

out = {"ms": [], "items": 0, "gpus": 0, "gpuhunt": gpuhunt.__file__}
for _ in range(rounds):
    t0 = time.perf_counter()
    cat = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    items = cat.query(provider=provider)
    best = {}
    for it in items:
        k = (it.gpu_name, it.spot)
        if k not in best or it.price / max(it.gpu_count, 1) < best[k].price / max(best[k].gpu_count, 1):
            best[k] = it
    out["ms"].append((time.perf_counter() - t0) * 1000)
    out["items"], out["gpus"] = len(items), len(best)
print(json.dumps(out))
