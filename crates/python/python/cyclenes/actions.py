"""Controller buttons and the discrete action sets of the environments.

A button mask is one byte in the order the NES controller's shift register reports the
buttons (bit 0 A, 1 B, 2 Select, 3 Start, 4 Up, 5 Down, 6 Left, 7 Right): the layout
nes-py's ``NESEnv`` uses for its 256 actions, so action N means the same buttons in both.
The named sets are the ones Gymnasium/nes-py users know from ``gym-super-mario-bros``
(``RIGHT_ONLY``, ``SIMPLE_MOVEMENT``, ``COMPLEX_MOVEMENT``), written as lists of button names.
"""
from __future__ import annotations

import enum
from typing import Sequence, Union

import numpy as np


class Button(enum.IntFlag):
    """One controller's buttons as bits of the mask ``Console.step`` takes."""

    NONE = 0
    A = 0x01
    B = 0x02
    SELECT = 0x04
    START = 0x08
    UP = 0x10
    DOWN = 0x20
    LEFT = 0x40
    RIGHT = 0x80


_NAMES = {
    "noop": Button.NONE,
    "a": Button.A,
    "b": Button.B,
    "select": Button.SELECT,
    "start": Button.START,
    "up": Button.UP,
    "down": Button.DOWN,
    "left": Button.LEFT,
    "right": Button.RIGHT,
}

RIGHT_ONLY = [["NOOP"], ["right"], ["right", "A"], ["right", "B"], ["right", "A", "B"]]

SIMPLE_MOVEMENT = RIGHT_ONLY + [["A"], ["left"]]

COMPLEX_MOVEMENT = [
    ["NOOP"],
    ["right"],
    ["right", "A"],
    ["right", "B"],
    ["right", "A", "B"],
    ["A"],
    ["left"],
    ["left", "A"],
    ["left", "B"],
    ["left", "A", "B"],
    ["down"],
    ["up"],
]

# Frame-level actions for Tetris: nothing, a shift, soft drop, a rotation, or a shift with a
# rotation in the same frame (as a player presses them).
TETRIS_MOVEMENT = [
    ["NOOP"],
    ["left"],
    ["right"],
    ["down"],
    ["A"],
    ["B"],
    ["left", "A"],
    ["right", "A"],
    ["left", "B"],
    ["right", "B"],
]

NAMED_SETS = {
    "right": RIGHT_ONLY,
    "simple": SIMPLE_MOVEMENT,
    "complex": COMPLEX_MOVEMENT,
    "tetris": TETRIS_MOVEMENT,
}

ActionSet = Union[str, Sequence[Sequence[str]]]


def button_mask(names: Sequence[str]) -> int:
    """The mask of a list of button names (``["right", "A"]``; case does not matter)."""
    mask = 0
    for name in names:
        try:
            mask |= _NAMES[name.lower()]
        except KeyError:
            raise ValueError(
                f"unknown button {name!r} (expected one of: {', '.join(_NAMES)})"
            ) from None
    return int(mask)


def action_table(actions: ActionSet) -> np.ndarray:
    """The button mask of each action as a ``uint8`` array.

    ``actions`` is ``"all"`` (the 256 masks, nes-py's ``NESEnv`` action space), the name of a
    set above (``"right"``, ``"simple"``, ``"complex"``, ``"tetris"``) or a list of button-name
    lists.
    """
    if isinstance(actions, str):
        if actions == "all":
            return np.arange(256, dtype=np.uint8)
        try:
            actions = NAMED_SETS[actions]
        except KeyError:
            raise ValueError(
                f"unknown action set {actions!r} (expected 'all', "
                f"{', '.join(repr(name) for name in NAMED_SETS)} or a list of button lists)"
            ) from None
    table = np.array([button_mask(names) for names in actions], dtype=np.uint8)
    if table.size == 0:
        raise ValueError("an action set needs at least one action")
    return table
