#!/usr/bin/env python3
"""Steps per second of the Python package (cyclenes) against nes-py, on the same machine and
the same public test ROMs (not run by CI).

Each backend runs Gymnasium-style steps with random actions from the 256 button masks
(nes-py's ``NESEnv`` action space; ``actions="all"`` here), frame skip 4 (the action held
for 4 frames, rewards summed: nes-py through 4 ``step`` calls, as frame-skip wrappers do,
ours in one call) and the RGB picture as the observation:

- nes-py: ``nes_py.NESEnv`` (one environment);
- ours, single: ``cyclenes.NesEnv`` (one environment);
- ours, batched: ``cyclenes.NesVectorEnv`` with ``--envs`` consoles on ``--threads`` native
  threads; each sub-environment takes as many steps as the single one (the same frames of
  each console's run), and its steps per second count every sub-environment's step.

The three run interleaved, round after round, and the table shows each one's median; within
a round ours single and batched are timed in alternating blocks (``--blocks``), and the
batched/single column is the median of each round's own ratio, which a machine whose speed
drifts moves less than a ratio of medians. It
installs nothing: make a virtual environment with both packages first, e.g.

    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install nes-py "numpy<2" maturin gymnasium
    (cd crates/python && VIRTUAL_ENV=$PWD/../../target/bench-venv \\
        ../../target/bench-venv/bin/maturin develop --release)
    target/bench-venv/bin/python scripts/bench-python.py

(nes-py 8.2.1 builds its C++ core on install, needs ``numpy<2`` (installing the package's test
requirements into the same environment upgrades NumPy: install ``numpy<2`` again after), and
runs mappers 0-3 only.)
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_ROMS = [
    "mapper/holy-mapperel/M0_P32K_C8K_V.nes",
    "mapper/holy-mapperel/M1_P128K_C32K.nes",
    "mapper/holy-mapperel/M2_P128K_CR8K_V.nes",
    "mapper/holy-mapperel/M3_P32K_C32K_H.nes",
    "cpu/instr_test-v5/official_only.nes",
    "ppu/ppu_vbl_nmi/ppu_vbl_nmi.nes",
]


def nes_py_steps(rom: pathlib.Path, steps: int, skip: int, seed: int) -> float:
    from nes_py import NESEnv

    env = NESEnv(str(rom))
    env.reset()
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, 256, size=steps)
    start = time.perf_counter()
    for action in actions:
        action = int(action)
        for _ in range(skip):
            result = env.step(action)
            if result[2]:
                env.reset()
                break
    seconds = time.perf_counter() - start
    env.close()
    return steps / seconds


def ours_single_and_batched_steps(
    rom: pathlib.Path, steps: int, skip: int, seed: int, envs: int, threads: int, blocks: int
) -> tuple[float, float]:
    """Steps per second of one ``NesEnv`` and of a ``NesVectorEnv`` of ``envs`` on
    ``threads``, timed in ``blocks`` alternating blocks (single, batched, single, ...), so a
    machine whose speed drifts during the round slows both alike."""
    import cyclenes

    single = cyclenes.NesEnv(rom, actions="all", frame_skip=skip, obs_type="rgb")
    single.reset(seed=seed)
    vector = cyclenes.NesVectorEnv(
        rom, envs, actions="all", frame_skip=skip, obs_type="rgb", threads=threads
    )
    vector.reset(seed=seed)
    rng = np.random.default_rng(seed)
    single_actions = rng.integers(0, 256, size=steps)
    # Every sub-environment takes `steps` steps, as the single environment does: the same
    # stretch of each console's run. (Taking `steps` steps in all would leave the batched
    # consoles at 1/`envs` of the single one's frames; a test ROM that ends and then waits
    # in an idle loop, which the core skips, would then be timed mostly busy here and
    # mostly idle there.)
    vector_actions = rng.integers(0, 256, size=(steps, envs))
    single_seconds = vector_seconds = 0.0
    for block in np.array_split(np.arange(steps), max(1, min(blocks, steps))):
        start = time.perf_counter()
        for action in single_actions[block]:
            _, _, terminated, truncated, _ = single.step(action)
            if terminated or truncated:
                single.reset()
        single_seconds += time.perf_counter() - start
        start = time.perf_counter()
        for row in vector_actions[block]:
            vector.step(row)
        vector_seconds += time.perf_counter() - start
    return steps / single_seconds, steps * envs / vector_seconds


def core_scaling(nes: str, rom: pathlib.Path) -> float:
    """What two cores give the emulator itself right now: ``nes bench --jobs 2`` total over
    ``--jobs 1`` (other load on the machine shows here first)."""
    import json
    import subprocess

    def total(jobs: int) -> float:
        out = subprocess.run(
            [nes, "bench", str(rom), "--frames", "1500", "--runs", "3", "--no-audio",
             "--no-video", "--jobs", str(jobs), "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        report = json.loads(out)
        return float(report.get("total_fps", report.get("fps", 0.0)))

    single = total(1)
    return total(2) / single if single else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roms", nargs="*", help="ROMs (default: holy-mapperel NROM, MMC1, UxROM and CNROM boards and two blargg tests)")
    parser.add_argument("--steps", type=int, default=1500, help="steps per environment per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--frame-skip", type=int, default=4)
    parser.add_argument("--envs", type=int, default=8, help="consoles in the batched env")
    parser.add_argument("--threads", type=int, default=2, help="native threads of the batched env")
    parser.add_argument(
        "--blocks", type=int, default=10,
        help="alternating blocks in which single and batched are timed within a round",
    )
    parser.add_argument("--no-nes-py", action="store_true", help="measure ours only")
    parser.add_argument(
        "--nes",
        default=str(ROOT / "target" / "release" / "nes") if (ROOT / "target" / "release" / "nes").is_file() else None,
        help="the release nes binary, for the last column (default: target/release/nes if built)",
    )
    args = parser.parse_args()
    shared = pathlib.Path(os.environ.get("NES_TEST_ROMS", ROOT.parent / "shared" / "test-roms"))
    roms = [pathlib.Path(rom) for rom in args.roms] or [shared / rom for rom in DEFAULT_ROMS]
    warnings.filterwarnings("ignore")
    print(
        f"frame skip {args.frame_skip}, random actions, RGB observations, {args.steps} steps x "
        f"{args.rounds} rounds (median); batched: {args.envs} envs on {args.threads} threads; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    rows = []
    for rom in roms:
        runs = {"nes-py": [], "single": [], "batched": []}
        refused = None
        for round_ in range(args.rounds):
            seed = round_
            if not args.no_nes_py and refused is None:
                try:
                    runs["nes-py"].append(nes_py_steps(rom, args.steps, args.frame_skip, seed))
                except Exception as error:  # nes-py refuses the ROM: n/a in the table
                    refused = f"{type(error).__name__}: {error}"
                    print(f"{rom.name}: nes-py refused it ({refused})", file=sys.stderr)
            single, batched = ours_single_and_batched_steps(
                rom, args.steps, args.frame_skip, seed, args.envs, args.threads, args.blocks
            )
            runs["single"].append(single)
            runs["batched"].append(batched)
            print(
                f"{rom.name} round {round_ + 1}: "
                + ", ".join(f"{name} {values[-1]:.0f}" for name, values in runs.items() if values),
                file=sys.stderr,
            )
        median = {name: statistics.median(values) for name, values in runs.items() if values}
        median["batched/1"] = statistics.median(
            batched / single for single, batched in zip(runs["single"], runs["batched"])
        )
        median["core"] = core_scaling(args.nes, rom) if args.nes else None
        rows.append((rom.name, median))
    print(
        "| ROM | nes-py steps/s | ours, 1 env | ours / nes-py | ours, batched "
        f"({args.envs} envs, {args.threads} threads) | batched / 1 env | core, 2 jobs / 1 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, median in rows:
        nes_py = median.get("nes-py")
        ratio = f"{median['single'] / nes_py:.2f}x" if nes_py else "n/a"
        print(
            f"| {name} | {nes_py:,.0f} | " if nes_py else f"| {name} | n/a | ",
            end="",
        )
        print(
            f"{median['single']:,.0f} | {ratio} | {median['batched']:,.0f} | "
            f"{median['batched/1']:.2f}x | "
            + (f"{median['core']:.2f}x |" if median["core"] else "n/a |")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
