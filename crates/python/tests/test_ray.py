"""Rollouts across Ray workers on a local Ray cluster started here on loopback (the same
code runs on a multi-machine cluster: only ``ray.init``'s address differs)."""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import cyclenes

if os.environ.get("CI") == "true":
    import ray  # CI installs the extra: a missing Ray must fail there, not skip.
else:
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed (pip install 'cyclenes[ray]'): Ray tests skipped"
    )

from cyclenes import ray as cray  # noqa: E402


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


def test_rollouts_across_ray_workers_match_local_ones(local_cluster, tetris_rom):
    # The ROM travels as bytes inside the factory: workers need no file.
    env_fn = functools.partial(cyclenes.TetrisEnv, tetris_rom, reward="lines")
    results = cray.run_rollouts(env_fn, num_rollouts=4, steps=12, seed=100, record=True)
    assert [result["seed"] for result in results] == [100, 101, 102, 103]
    for result in results:
        local = cray.rollout(env_fn, 12, seed=result["seed"], record=True)
        assert np.array_equal(result["actions"], local["actions"])
        assert result["total_reward"] == local["total_reward"]
        # 5 placements end a game on the synthetic cartridge, one line each.
        assert result["episodes"] == 2 and result["episode_returns"] == [5.0, 5.0]


def test_vector_envs_in_ray_actors(local_cluster, mmc1_rom):
    env_fn = functools.partial(
        cyclenes.NesVectorEnv, mmc1_rom.read_bytes(), 2, obs_type="ram", threads=1,
        max_episode_steps=5,
    )
    workers = cray.make_workers(env_fn, 2, seed=7)
    first = cray.collect(workers, steps=6)
    second = cray.collect(workers, steps=6)
    assert len(first) == 2
    for batch in first + second:
        assert batch["actions"].shape == (6, 2)
        assert batch["rewards"].shape == (6, 2)
        assert batch["last_observation"].shape == (2, 2048)
    # 5-step episodes: truncated at step 5 of the first call, and the workers keep their
    # environments between calls (step 12 ends the second episode... at step 11).
    assert first[0]["truncated"][4].all()
    assert second[0]["truncated"][4].all()
