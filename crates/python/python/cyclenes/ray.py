"""Many environments across Ray workers (``pip install cyclenes[ray]``).

Two shapes of work, both plain Ray underneath, so they run the same on ``ray.init()`` on a
laptop and on a multi-machine cluster (``ray.init(address="auto")`` on a node of it, with
``cyclenes`` installed on every node or shipped with ``runtime_env={"pip": ["cyclenes"]}``):

- ``run_rollouts(env_fn, num_rollouts, steps)``: independent rollouts as Ray tasks, each
  building its environment with ``env_fn()`` (any picklable callable: a
  ``functools.partial`` of ``NesEnv``/``TetrisEnv``/``NesVectorEnv`` with the ROM's *bytes*
  travels to machines that do not have the file), stepping it with a policy, and returning
  a summary (and the transitions if asked).
- ``RolloutWorker``: a Ray actor that keeps an environment (typically a vector one, using
  the worker's cores with native threads) between calls: ``make_workers(env_fn, n)``, then
  ``collect(workers, steps)`` gathers a batch from each in parallel (for training loops).

A policy is a picklable callable ``policy(observation, action_space, rng) -> action``;
``None`` samples random actions from the action space with the rollout's seeded
generator.
"""
from __future__ import annotations

import time
from typing import Any, Callable, List, Optional

import numpy as np

Policy = Callable[[Any, Any, np.random.Generator], Any]


def _ray():
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError(
            "cyclenes.ray needs Ray: pip install 'cyclenes[ray]' (or pip install ray)"
        ) from error
    return ray


def rollout(
    env_fn: Callable[[], Any],
    steps: int,
    seed: int = 0,
    policy: Optional[Policy] = None,
    record: bool = False,
) -> dict:
    """Runs ``steps`` steps of ``env_fn()`` here (no Ray): the body of a rollout task.

    Works with single environments and vector ones (then a step is one step of every
    sub-environment, and counts are totals). Returns ``seed``, ``steps``, ``env_steps``,
    ``episodes`` (episodes finished), ``total_reward``, ``episode_returns`` (of finished
    episodes), ``seconds``, ``host`` and, with ``record``, ``actions`` and ``rewards``
    arrays.
    """
    import socket

    env = env_fn()
    rng = np.random.default_rng(seed)
    vector = hasattr(env, "num_envs")
    env.action_space.seed(seed)
    observation, _ = env.reset(seed=seed)
    n = env.num_envs if vector else 1
    returns = np.zeros(n)
    finished: List[float] = []
    actions, rewards = [], []
    total = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        if policy is None:
            action = env.action_space.sample()
        else:
            action = policy(observation, env.action_space, rng)
        observation, reward, terminated, truncated, _ = env.step(action)
        reward = np.atleast_1d(np.asarray(reward, dtype=np.float64))
        done = np.atleast_1d(np.asarray(terminated)) | np.atleast_1d(np.asarray(truncated))
        returns += reward
        total += float(reward.sum())
        for i in np.flatnonzero(done):
            finished.append(float(returns[i]))
            returns[i] = 0.0
        if not vector and done[0]:
            observation, _ = env.reset()
        if record:
            actions.append(np.asarray(action))
            rewards.append(reward)
    seconds = time.perf_counter() - start
    env.close()
    result = {
        "seed": seed,
        "steps": steps,
        "env_steps": steps * n,
        "episodes": len(finished),
        "total_reward": total,
        "episode_returns": finished,
        "seconds": seconds,
        "host": socket.gethostname(),
    }
    if record:
        result["actions"] = np.stack(actions) if actions else np.zeros((0,))
        result["rewards"] = np.stack(rewards) if rewards else np.zeros((0,))
    return result


def run_rollouts(
    env_fn: Callable[[], Any],
    num_rollouts: int,
    steps: int,
    *,
    seed: int = 0,
    policy: Optional[Policy] = None,
    record: bool = False,
    num_cpus: float = 1,
) -> List[dict]:
    """Runs ``num_rollouts`` rollouts as Ray tasks (rollout i seeded ``seed + i``), each
    asking Ray for ``num_cpus`` CPUs, and returns their results in order. Ray must be
    initialised (``ray.init(...)``); it spreads the tasks over the cluster's workers."""
    ray = _ray()
    task = ray.remote(num_cpus=num_cpus)(rollout)
    env_ref = ray.put(env_fn)
    futures = [
        task.remote(env_ref, steps, seed + i, policy, record) for i in range(num_rollouts)
    ]
    return ray.get(futures)


class RolloutWorker:
    """An environment kept alive in a Ray actor (see ``make_workers``): each ``sample``
    call continues its episodes for ``steps`` more steps and returns the transitions."""

    def __init__(self, env_fn: Callable[[], Any], seed: int = 0) -> None:
        self.env = env_fn()
        self.rng = np.random.default_rng(seed)
        self.env.action_space.seed(seed)
        self.observation, _ = self.env.reset(seed=seed)
        self.vector = hasattr(self.env, "num_envs")

    def sample(self, steps: int, policy: Optional[Policy] = None) -> dict:
        """``steps`` steps: ``actions``, ``rewards``, ``terminated``, ``truncated`` arrays
        (first axis the step) and the last observation."""
        actions, rewards, terminated, truncated = [], [], [], []
        for _ in range(steps):
            if policy is None:
                action = self.env.action_space.sample()
            else:
                action = policy(self.observation, self.env.action_space, self.rng)
            self.observation, reward, term, trunc, _ = self.env.step(action)
            actions.append(np.asarray(action))
            rewards.append(np.asarray(reward, dtype=np.float64))
            terminated.append(np.asarray(term))
            truncated.append(np.asarray(trunc))
            if not self.vector and (term or trunc):
                self.observation, _ = self.env.reset()
        return {
            "actions": np.stack(actions),
            "rewards": np.stack(rewards),
            "terminated": np.stack(terminated),
            "truncated": np.stack(truncated),
            "last_observation": self.observation,
        }


def make_workers(
    env_fn: Callable[[], Any], num_workers: int, *, seed: int = 0, num_cpus: float = 1
) -> list:
    """Starts ``num_workers`` ``RolloutWorker`` actors (worker i seeded ``seed + i``), each
    reserving ``num_cpus`` CPUs: give a worker holding an ``NesVectorEnv`` with ``threads=k``
    ``num_cpus=k``."""
    ray = _ray()
    actor = ray.remote(num_cpus=num_cpus)(RolloutWorker)
    env_ref = ray.put(env_fn)
    return [actor.remote(env_ref, seed + i) for i in range(num_workers)]


def collect(workers: list, steps: int, policy: Optional[Policy] = None) -> List[dict]:
    """One ``sample(steps)`` from every worker, in parallel; results in worker order."""
    ray = _ray()
    return ray.get([worker.sample.remote(steps, policy) for worker in workers])
