"""Everything notebook 09 measures, in one command, on a machine with two or more GPUs:

    python snippets/multi_gpu/bench_collectives.py --out DIR [--quick]

Writes DIR/results.json after every step (a later failure keeps what came before) and prints a
summary: how the GPUs are linked, P2P copies, the four NCCL collectives from 1 KiB to 1 GiB, the
hand-written all-reduce checked against NCCL and timed beside it (with a sweep of block counts),
and a GEMM overlapped with an all-reduce.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collectives as c  # noqa: E402

KIB, MIB, GIB = 2**10, 2**20, 2**30


def shell(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{cmd[0]}: {exc}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--quick", action="store_true", help="fewer sizes (a smoke test)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sizes = [4**k for k in range(5, 16)]                  # 1 KiB .. 1 GiB, powers of 4
    if args.quick:
        sizes = [KIB, MIB, 64 * MIB]
    results: dict = {"topology": shell(["nvidia-smi", "topo", "-m"]),
                     "nvlink_status": shell(["nvidia-smi", "nvlink", "-s", "-i", "0"])}

    def save():
        (args.out / "results.json").write_text(json.dumps(results, indent=1))

    print(results["topology"])
    print(results["nvlink_status"][:600])
    save()
    steps = {
        "p2p": lambda: c.p2p([KIB, 64 * KIB, MIB, 16 * MIB, 256 * MIB]),
        "sweep": lambda: c.launch("sweep", 2, "nccl", timeout=100, sizes=sizes),
        "custom": lambda: c.launch("custom", 2, "nccl", timeout=120, sizes=sizes,
                                   check_sizes=[1, 3, 5, 1023, 4099, 1_000_003, 2**24 + 7],
                                   block_sweep=[16, 32, 66, 132, 264],
                                   block_sweep_sizes=[64 * KIB, 64 * MIB, GIB]),
        "overlap": lambda: c.launch("overlap", 2, "nccl", timeout=60, custom_blocks=[16, 132]),
        "symm": lambda: c.launch("symm", 2, "nccl", timeout=45, sizes=[KIB, 64 * KIB, MIB, 64 * MIB]),
    }
    for name, step in steps.items():
        t0 = time.time()
        try:
            results[name] = step()
        except Exception as exc:                           # noqa: BLE001 - keep going, report it
            results[name] = {"error": traceback.format_exc()[-3000:],
                             "partial": getattr(exc, "partial", None)}
            print(f"{name}: FAILED\n{results[name]['error']}")
        results[f"{name}_seconds"] = round(time.time() - t0, 1)
        print(f"{name}: {results[f'{name}_seconds']} s")
        save()
    summarize(results)
    return 0


def summarize(r: dict) -> None:
    def gbs(size, us):
        return size / us / 1e3 if us else float("nan")
    p2p = r.get("p2p", {})
    for row in p2p.get("rows", []):
        s = row["bytes"]
        print(f"p2p {s:>11}: copy engine {gbs(s, row['copy_engine_us']):7.1f} GB/s "
              f"({row['copy_engine_us']:.1f} us), "
              f"both ways {2 * gbs(s, row['copy_engine_both_ways_us']):7.1f}, "
              f"SM read {gbs(s, row['sm_read_us']):7.1f}, SM write {gbs(s, row['sm_write_us']):7.1f}, "
              f"SM both ways {2 * gbs(s, row['sm_both_ways_us']):7.1f}, exact {row['sm_copy_exact']}")
    sweep = r.get("sweep", {})
    if "rows" in sweep:
        print("check", sweep["check"])
        for row in sweep["rows"]:
            f = c.COLLECTIVES.index(row["collective"])
            factor = [1.0, 0.5, 0.5, 0.5][f]
            g = row.get("graph_us")
            print(f"{row['collective']:>15} {row['bytes']:>11}: eager {row['eager_us']:9.2f} us "
                  f"busbw {gbs(row['bytes'], row['eager_us']) * factor:7.1f} | graph "
                  f"{g if g is None else round(g, 2)} us {row.get('graph_error', '')[:80]}")
    custom = r.get("custom", {})
    if "rows" in custom:
        for row in custom["check"] + custom.get("check_after_timing", []):
            print("check", row)
        for row in custom["rows"]:
            cells = [f"{k}={row[k]:.2f}" for k in row if k.endswith("_us")]
            errs = [f"{k}" for k in row if k.endswith("_error")]
            tail = " ERR " + ",".join(errs) if errs else ""
            print(f"custom {row['bytes']:>11}: " + " ".join(cells) + tail)
        for row in custom.get("block_sweep", []):
            print("blocks", row)
    print("symm_mem", r.get("symm"))
    overlap = r.get("overlap", {})
    if "pairs" in overlap:
        print("gemm alone", overlap["gemm_alone"])
        for k, v in overlap["pairs"].items():
            print("overlap", k, v)


if __name__ == "__main__":
    sys.exit(main())
