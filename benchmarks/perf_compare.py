"""The performance-model benchmarks in this tree and in an older commit, in the same run, as ratios.

    python benchmarks/perf_compare.py [COMMIT]      (default: a1ae104, the first-generation model)

The older commit is checked out in a temporary git worktree; each side runs in its own fresh process, the two
interleaved twice so that a noisy machine hurts both alike. Ratios > 1 mean this tree is faster (or evaluates more
layouts per second).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHES = ("benchmarks/perf_train.py", "benchmarks/perf_serve.py")
HIGHER_IS_BETTER = {"layouts_per_s", "layouts_per_query"}  # the rest are times


def run(tree: Path, bench: str) -> dict:
    out = subprocess.run([sys.executable, str(ROOT / bench), "--json"], cwd=tree, capture_output=True, text=True,
                         env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    commit = sys.argv[1] if len(sys.argv) > 1 else "a1ae104"
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), commit], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            for bench in BENCHES:
                results = {"old": [], "new": []}
                for _ in range(2):
                    results["old"].append(run(old, bench))
                    results["new"].append(run(ROOT, bench))
                print(f"== {bench} (best of 2; ratio = new advantage)")
                for key in results["new"][0]:
                    if key not in results["old"][0]:
                        new = min(r[key] for r in results["new"])
                        print(f"  {key:>28}: new {new:10.3f}   (no counterpart in {commit})")
                        continue
                    pick = max if key in HIGHER_IS_BETTER else min
                    o, n = pick(r[key] for r in results["old"]), pick(r[key] for r in results["new"])
                    ratio = n / o if key in HIGHER_IS_BETTER else o / n
                    print(f"  {key:>28}: old {o:10.3f}  new {n:10.3f}  ratio {ratio:5.2f}x")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)


if __name__ == "__main__":
    main()
