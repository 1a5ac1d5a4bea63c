"""Vector environments (``gymnasium.vector.VectorEnv``) whose N consoles step in one call
on native threads (``ConsoleBatch``): Python's per-call cost is paid once per batch, and
the frames of all consoles run in parallel with the GIL released.

Autoreset follows Gymnasium's default, ``AutoresetMode.NEXT_STEP`` (declared in
``metadata["autoreset_mode"]``): when sub-environment i terminates or is truncated at a
step, the *next* ``step`` call resets it instead of stepping it (its action is ignored) and
returns its first observation with reward 0 and ``terminated = truncated = False``.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import tetris
from ._native import ConsoleBatch
from .actions import ActionSet, action_table
from .env import RamFunction, observation_space

_RENDER_OF_OBS = {"rgb": "rgb", "index": "index", "ram": "none", "state": "none"}


class _BatchedEnv(VectorEnv):
    """What the vector environments share: the batch, actions, episode bookkeeping."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def _setup(
        self,
        rom: Any,
        num_envs: int,
        obs_type: str,
        single_observation_space: spaces.Space,
        single_action_space: spaces.Space,
        max_episode_steps: Optional[int],
        threads: Optional[int],
        power_on: str,
    ) -> None:
        try:
            render = _RENDER_OF_OBS[obs_type]
        except KeyError:
            raise ValueError(
                f"obs_type must be one of {tuple(_RENDER_OF_OBS)}, not {obs_type!r}"
            ) from None
        self.batch = ConsoleBatch(
            rom, num_envs, threads=threads, render=render, power_on=power_on
        )
        self.num_envs = num_envs
        self.obs_type = obs_type
        self.single_observation_space = single_observation_space
        self.observation_space = batch_space(single_observation_space, num_envs)
        self.single_action_space = single_action_space
        self.action_space = batch_space(single_action_space, num_envs)
        self.max_episode_steps = max_episode_steps
        self._steps = np.zeros(num_envs, dtype=np.int64)
        self._autoreset = np.zeros(num_envs, dtype=bool)
        self.render_mode = None

    def _observe(self, pictures: Optional[np.ndarray]):
        if self.obs_type in ("rgb", "index"):
            return pictures
        return self.batch.ram.copy()

    def _restart(self, mask: np.ndarray) -> None:
        """Puts the masked consoles back at their episode start."""
        self.batch.load_state(self._start_state, mask=mask)
        self._steps[mask] = 0

    def _info(self) -> dict:
        every = np.ones(self.num_envs, dtype=bool)
        return {"frame": self.batch.frame_counts(), "_frame": every}

    def _finish(self, stepping: np.ndarray, terminated: np.ndarray):
        self._steps[stepping] += 1
        truncated = np.zeros(self.num_envs, dtype=bool)
        if self.max_episode_steps is not None:
            truncated = stepping & (self._steps >= self.max_episode_steps) & ~terminated
        self._autoreset = terminated | truncated
        return truncated

    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Resets every sub-environment (or those of ``options["reset_mask"]``)."""
        super().reset(seed=seed)
        mask = (options or {}).get("reset_mask")
        mask = np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask, bool)
        self._restart(mask)
        self._autoreset[mask] = False
        return self._observe(self.batch.observe()), self._info()


class NesVectorEnv(_BatchedEnv):
    """``num_envs`` copies of ``NesEnv`` stepped together on native threads.

    Takes ``NesEnv``'s arguments (``actions``, ``frame_skip``, ``obs_type`` "rgb", "index"
    or "ram", ``max_episode_steps``, ``reward_fn``, ``done_fn``; the functions get the
    (num_envs, 2048) RAM before and after and return one value per environment) and
    ``threads``, the native threads sharing the consoles (default: the machine's cores).
    """

    def __init__(
        self,
        rom: Any,
        num_envs: int,
        *,
        actions: ActionSet = "simple",
        frame_skip: int = 4,
        obs_type: str = "rgb",
        max_episode_steps: Optional[int] = None,
        reward_fn: Optional[RamFunction] = None,
        done_fn: Optional[RamFunction] = None,
        threads: Optional[int] = None,
        power_on: str = "hardware",
    ) -> None:
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, not {frame_skip}")
        self._buttons = action_table(actions)
        self._setup(
            rom,
            num_envs,
            obs_type,
            observation_space(obs_type),
            spaces.Discrete(len(self._buttons)),
            max_episode_steps,
            threads,
            power_on,
        )
        self.frame_skip = int(frame_skip)
        self.reward_fn = reward_fn
        self.done_fn = done_fn
        self._start_state = self.batch.save_state(0)

    def step(self, actions):
        actions = np.asarray(actions)
        resetting = self._autoreset.copy()
        stepping = ~resetting
        if resetting.any():
            self._restart(resetting)
        needs_ram = self.reward_fn is not None or self.done_fn is not None
        before = self.batch.ram.copy() if needs_ram else None
        pictures = self.batch.step(self._buttons[actions], self.frame_skip, mask=stepping)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        if needs_ram:
            after = self.batch.ram
            if self.reward_fn is not None:
                rewards = np.where(stepping, np.asarray(self.reward_fn(before, after), float), 0.0)
            if self.done_fn is not None:
                terminated = stepping & np.asarray(self.done_fn(before, after), bool)
        truncated = self._finish(stepping, terminated)
        return self._observe(pictures), rewards, terminated, truncated, self._info()


class TetrisVectorEnv(_BatchedEnv):
    """``num_envs`` games of NES Tetris (``TetrisEnv``) stepped together: placements (or
    frames) of all games run on native threads in one call.

    Takes ``TetrisEnv``'s arguments (``action_mode``, ``obs_type`` "state", "ram", "rgb" or
    "index", ``reward``, ``frame_skip``, ``max_episode_steps``, ``max_placement_frames``,
    ``randomize``) and ``threads``.
    """

    def __init__(
        self,
        rom: Any,
        num_envs: int,
        *,
        action_mode: str = "placement",
        obs_type: str = "state",
        reward: str = "score",
        frame_skip: int = 1,
        max_episode_steps: Optional[int] = None,
        max_placement_frames: int = 2000,
        randomize: bool = True,
        threads: Optional[int] = None,
        power_on: str = "hardware",
    ) -> None:
        # One TetrisEnv checks the arguments, starts the game and gives the start state.
        single = tetris.TetrisEnv(
            rom,
            action_mode=action_mode,
            obs_type=obs_type,
            reward=reward,
            frame_skip=frame_skip,
            max_episode_steps=max_episode_steps,
            max_placement_frames=max_placement_frames,
            randomize=randomize,
            power_on=power_on,
        )
        self._setup(
            rom,
            num_envs,
            obs_type,
            single.observation_space,
            single.action_space,
            max_episode_steps,
            threads,
            power_on,
        )
        self.action_mode = action_mode
        self.reward_kind = reward
        self.frame_skip = int(frame_skip)
        self.max_placement_frames = int(max_placement_frames)
        self.randomize = randomize
        self._buttons = action_table("tetris")
        self._start_state = single._start_state
        self.batch.load_state(self._start_state)

    def _observe(self, pictures: Optional[np.ndarray]):
        if self.obs_type == "state":
            return tetris.state_observation(self.batch.ram)
        return super()._observe(pictures)

    def _restart(self, mask: np.ndarray) -> None:
        super()._restart(mask)
        if self.randomize:
            ram = self.batch.ram
            for i in np.flatnonzero(mask):
                tetris.randomize_start(ram[i], self.np_random)

    def _info(self) -> dict:
        info = super()._info()
        ram = self.batch.ram
        every = info["_frame"]
        info.update(
            lines=tetris.lines(ram),
            _lines=every,
            score=tetris.score(ram),
            _score=every,
            level=ram[:, tetris.LEVEL].astype(np.int64),
            _level=every,
        )
        return info

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.int64)
        resetting = self._autoreset.copy()
        stepping = ~resetting
        if resetting.any():
            self._restart(resetting)
        before = self.batch.ram.copy()
        if self.action_mode == "placement":
            rotation, column = np.divmod(actions, tetris.COLUMNS)
            targets = np.stack([tetris.target_ids(before, rotation), column], axis=1)
            _, _, _, _, pictures = self.batch.tetris_place(
                np.ascontiguousarray(targets, dtype=np.uint8),
                mask=stepping,
                max_frames=self.max_placement_frames,
            )
        else:
            pictures = self.batch.step(self._buttons[actions], self.frame_skip, mask=stepping)
        after = self.batch.ram
        rewards = np.where(stepping, tetris.rewards(self.reward_kind, before, after), 0.0)
        terminated = stepping & tetris.game_over(after)
        truncated = self._finish(stepping, terminated)
        return self._observe(pictures), rewards, terminated, truncated, self._info()
