"""``NesEnv``: a Gymnasium environment for any NES ROM."""
from __future__ import annotations

from typing import Any, Callable, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ._native import RAM_SIZE, SCREEN_HEIGHT, SCREEN_WIDTH, Console
from .actions import ActionSet, action_table

OBS_TYPES = ("rgb", "index", "ram")

# A reward (or termination) function of the RAM before and after a step.
RamFunction = Callable[[np.ndarray, np.ndarray], Any]


def observation_space(obs_type: str) -> spaces.Box:
    """The single-environment observation space of ``obs_type``."""
    if obs_type == "rgb":
        return spaces.Box(0, 255, (SCREEN_HEIGHT, SCREEN_WIDTH, 3), np.uint8)
    if obs_type == "index":
        return spaces.Box(0, 63, (SCREEN_HEIGHT, SCREEN_WIDTH), np.uint8)
    if obs_type == "ram":
        return spaces.Box(0, 255, (RAM_SIZE,), np.uint8)
    raise ValueError(f"obs_type must be one of {OBS_TYPES}, not {obs_type!r}")


class NesEnv(gym.Env):
    """Any NES ROM as a Gymnasium environment.

    Args:
        rom: a path or the bytes of an iNES / NES 2.0 image.
        actions: the discrete action set: ``"all"`` (256 button masks, as nes-py's
            ``NESEnv``), ``"right"``, ``"simple"``, ``"complex"`` (gym-super-mario-bros's
            ``RIGHT_ONLY``, ``SIMPLE_MOVEMENT``, ``COMPLEX_MOVEMENT``) or a list of
            button-name lists such as ``[["NOOP"], ["right", "A"]]``.
        frame_skip: frames each step runs with the action's buttons held (>= 1).
        obs_type: ``"rgb"`` (240x256x3), ``"index"`` (240x256 palette indices) or ``"ram"``
            (the 2048 bytes of CPU RAM).
        max_episode_steps: steps after which an episode is truncated (``None``: never).
        reward_fn: ``reward_fn(ram_before, ram_after) -> float`` (default: reward 0).
        done_fn: ``done_fn(ram_before, ram_after) -> bool``, the episode's termination
            (default: never).
        render_mode: ``None`` or ``"rgb_array"``.
        power_on, power_on_ram, region: as for ``Console``.

    ``reset()`` restores the power-on state (a save state taken when the environment was
    made: frame 0, exactly as the CLI's ``nes run`` starts), so every episode starts alike;
    ``reset(options={"noop_max": K})`` then runs a random 0..K frames without input, drawn
    from the environment's seeded generator, for varied starts. ``info`` has ``frame`` (the
    console's frame count) and ``lag_count``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 60}

    def __init__(
        self,
        rom: Any,
        *,
        actions: ActionSet = "simple",
        frame_skip: int = 4,
        obs_type: str = "rgb",
        max_episode_steps: Optional[int] = None,
        reward_fn: Optional[RamFunction] = None,
        done_fn: Optional[RamFunction] = None,
        render_mode: Optional[str] = None,
        power_on: str = "hardware",
        power_on_ram: Optional[str] = None,
        region: Optional[str] = None,
    ) -> None:
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, not {frame_skip}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', not {render_mode!r}")
        self.console = Console(
            rom, power_on=power_on, power_on_ram=power_on_ram, region=region
        )
        self._buttons = action_table(actions)
        self.frame_skip = int(frame_skip)
        self.obs_type = obs_type
        self.observation_space = observation_space(obs_type)
        self.action_space = spaces.Discrete(len(self._buttons))
        self.max_episode_steps = max_episode_steps
        self.reward_fn = reward_fn
        self.done_fn = done_fn
        self.render_mode = render_mode
        self._start_state = self.console.save_state()
        self._steps = 0

    def _observe(self) -> np.ndarray:
        if self.obs_type == "rgb":
            return self.console.rgb()
        if self.obs_type == "index":
            return self.console.screen()
        # A copy: the console's RAM array changes in place at the next step.
        return self.console.ram.copy()

    def _info(self) -> dict:
        return {"frame": self.console.frame_count, "lag_count": self.console.lag_count}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.console.load_state(self._start_state)
        self._steps = 0
        noop_max = int((options or {}).get("noop_max", 0))
        if noop_max > 0:
            self.console.step(0, int(self.np_random.integers(0, noop_max + 1)))
        return self._observe(), self._info()

    def step(self, action):
        buttons = int(self._buttons[int(action)])
        needs_ram = self.reward_fn is not None or self.done_fn is not None
        before = self.console.ram.copy() if needs_ram else None
        self.console.step(buttons, self.frame_skip)
        self._steps += 1
        reward = 0.0
        terminated = False
        if needs_ram:
            after = self.console.ram
            if self.reward_fn is not None:
                reward = float(self.reward_fn(before, after))
            if self.done_fn is not None:
                terminated = bool(self.done_fn(before, after))
        truncated = (
            self.max_episode_steps is not None and self._steps >= self.max_episode_steps
        )
        return self._observe(), reward, terminated, bool(truncated), self._info()

    def render(self):
        if self.render_mode == "rgb_array":
            return self.console.rgb()
        return None

    def get_action_meanings(self) -> list:
        """The buttons of each action, as strings (``"right+A"``)."""
        from .actions import Button

        meanings = []
        for mask in self._buttons:
            names = [b.name for b in Button if b and int(mask) & b]
            meanings.append("+".join(names) if names else "NOOP")
        return meanings
