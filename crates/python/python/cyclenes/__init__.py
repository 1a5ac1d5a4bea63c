"""cyclenes: a cycle-accurate NES emulator for Python.

- ``Console``: one console (picture, RAM, audio and save states as NumPy arrays and bytes);
- ``ConsoleBatch``: N consoles stepped in one call on native threads;
- ``NesEnv`` / ``TetrisEnv``: Gymnasium environments (``cyclenes.env``, ``cyclenes.tetris``);
- ``NesVectorEnv`` / ``TetrisVectorEnv``: ``gymnasium.vector`` environments on a batch
  (``cyclenes.vector``);
- ``cyclenes.ray``: rollouts across Ray workers (the ``ray`` extra).

The environments are also registered with Gymnasium as ``cyclenes/Nes-v0`` and
``cyclenes/Tetris-v0`` (``gymnasium.make("cyclenes/Tetris-v0", rom="tetris.nes")``).
"""
from ._native import (
    RAM_SIZE,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    STATE_FORMAT_VERSION,
    Console,
    ConsoleBatch,
)
from .actions import Button, action_table, button_mask
from .env import NesEnv
from .tetris import TetrisEnv
from .vector import NesVectorEnv, TetrisVectorEnv

__all__ = [
    "Button",
    "Console",
    "ConsoleBatch",
    "NesEnv",
    "NesVectorEnv",
    "RAM_SIZE",
    "SCREEN_HEIGHT",
    "SCREEN_WIDTH",
    "STATE_FORMAT_VERSION",
    "TetrisEnv",
    "TetrisVectorEnv",
    "action_table",
    "button_mask",
]


def _register() -> None:
    import gymnasium

    for env_id, entry in (
        ("cyclenes/Nes-v0", "cyclenes.env:NesEnv"),
        ("cyclenes/Tetris-v0", "cyclenes.tetris:TetrisEnv"),
    ):
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry)


_register()
