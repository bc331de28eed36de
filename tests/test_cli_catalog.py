"""`airace catalog`: readable table and the whole catalog with sources as JSON; bad arguments exit 2."""

import json
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "model", *args], capture_output=True, text=True, timeout=60)


def test_catalog_table_lists_every_system():
    out = run("catalog")
    assert out.returncode == 0
    for key in ("hgx_h100", "gb300_nvl72", "vr_nvl72", "rubin_ultra_nvl144", "feynman"):
        assert key in out.stdout


def test_catalog_json_has_sources():
    out = run("catalog", "--json")
    assert out.returncode == 0
    data = json.loads(out.stdout)
    gb300 = data["systems"]["gb300_nvl72"]
    assert gb300["gpus_per_system"] == 72
    assert gb300["sources"]["scaleout_gbit_s"]["kind"] == "official"
    assert gb300["sources"]["scaleout_gbit_s"]["url"].startswith("https://")
    assert "deepseek-v3" in data["workloads"]


def test_bad_argument_exits_2_with_one_line():
    out = run("perf", "train", "--gpus", "many")
    assert out.returncode == 2
    assert "expected a positive whole number, got 'many'" in out.stderr
    assert "Traceback" not in out.stderr
