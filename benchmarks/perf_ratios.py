"""What the market sees: each catalog system's per-GPU value on the baseline scenario's reference jobs relative to
HGX H100 (serving: Llama 3 70B 1k/1k and DeepSeek-R1 2k/2k, server scenario, NVFP4 where the system has it, 72
GPUs or one system; training: Llama 3.1 405B FP8 on 576 GPUs), in this tree and in an older commit.

    python benchmarks/perf_ratios.py [COMMIT]        (default: a1ae104, the first-generation model)

Not a speed benchmark: it lives here because it runs two trees like perf_compare.py does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = r'''
import json
from model.hardware.systems import SYSTEM_KEYS, systems
from model.performance.serving import serve_estimate
from model.performance.training import train_estimate
def prec(s, want):
    return want if systems()[s].dense_tflops(want) else "fp8"
jobs = [("llama3-70b", 1024, 1024), ("deepseek-r1", 2048, 2048)]
out = {}
for s in SYSTEM_KEYS:
    used = max(72, systems()[s].gpus_per_system)
    row = {}
    for wl, i, o in jobs:
        r = serve_estimate(s, used, wl, prec(s, "nvfp4"), i, o, scenario="server")
        row[wl] = r.output_tokens_per_s_per_gpu if r.feasible else 0.0
    t = train_estimate(s, 576, "llama3.1-405b", prec(s, "fp8"), 8192, 1152)
    row["train"] = t.tflops_per_gpu if t.feasible else 0.0
    out[s] = row
print(json.dumps(out))
'''


def probe(tree: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tree, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    commit = sys.argv[1] if len(sys.argv) > 1 else "a1ae104"
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old_tree), commit], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            old = probe(old_tree)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, check=False)
    new = probe(ROOT)
    print(f"{'system':20s} | {'Llama 3 70B serve':>19s} | {'DeepSeek-R1 serve':>19s} | {'405B train':>19s}")
    print(f"{'(x HGX H100)':20s} | {'before':>9s} {'after':>9s} | {'before':>9s} {'after':>9s} | "
          f"{'before':>9s} {'after':>9s}")
    for s in new:
        cells = []
        for key in ("llama3-70b", "deepseek-r1", "train"):
            b = old[s][key] / old["hgx_h100"][key] if old["hgx_h100"][key] else 0.0
            a = new[s][key] / new["hgx_h100"][key] if new["hgx_h100"][key] else 0.0
            cells.append(f"{b:9.2f} {a:9.2f}")
        print(f"{s:20s} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
