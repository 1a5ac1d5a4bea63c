"""NES Tetris as a Gymnasium environment: the game's state read from RAM, frame-level and
placement-level actions.

RAM map (Data Crystal, "Tetris (NES, Nintendo)/RAM map",
https://datacrystal.tcrf.net/wiki/Tetris_(NES,_Nintendo)/RAM_map; the orientation IDs,
the empty-square tile $EF and "playing" = game mode 4 with play state below 9 as in
meatfighter's "Applying Artificial Intelligence to Nintendo Tetris",
https://meatfighter.com/nintendotetrisai). The game keeps the active player's variables at
$0040-$005F (mirrored at $0060-$007F):

==========  ===========================================================================
$0040       falling piece: pivot column (0-9)
$0041       falling piece: row
$0042       falling piece: orientation ID 0-18 ($13: none), see ``ORIENTATIONS``
$0044       level (binary)
$0048       play state: 1 piece under control, 2-8 lock / line clear / spawn, 10 game over
$0050-0051  lines, BCD, little-endian (4 digits)
$0053-0055  score, BCD, little-endian (6 digits)
$00BF       next piece's orientation ID
$00C0       game mode: 0 legal screen, 1 title, 2-3 menus, 4 game, 5 demo
$0400-04C7  playfield, 20 rows x 10 columns, row-major from the top; $EF = empty
==========  ===========================================================================

All reading is vectorised over a batch of RAM arrays (shape (n, 2048)), so the single and
the vector environments share it.
"""
from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ._native import Console
from .actions import Button, action_table
from .env import observation_space

TETRIMINO_X = 0x0040
TETRIMINO_Y = 0x0041
TETRIMINO_ID = 0x0042
LEVEL = 0x0044
PLAY_STATE = 0x0048
LINES = 0x0050
SCORE = 0x0053
RNG_SEED = 0x0017
NEXT_TETRIMINO_ID = 0x00BF
GAME_MODE = 0x00C0
PLAYFIELD = 0x0400
EMPTY_SQUARE = 0xEF
ROWS, COLUMNS = 20, 10

GAME_MODE_PLAYING = 4
PLAY_STATE_ACTIVE = 1
PLAY_STATE_GAME_OVER = 10

PIECES = "TJZOSLI"
NO_PIECE = len(PIECES)  # 7: no piece (orientation ID $13 or out of range)

# The game's orientation IDs of each piece type, in ID order (the driver presses A until the
# ID it wants comes up, whichever way A turns): T 00-03, J 04-07, Z 08-09, O 0A, S 0B-0C, L 0D-10, I 11-12. The spawn orientations
# are 02, 07, 08, 0A, 0B, 0E, 12.
ORIENTATIONS = [
    [0x00, 0x01, 0x02, 0x03],
    [0x04, 0x05, 0x06, 0x07],
    [0x08, 0x09],
    [0x0A],
    [0x0B, 0x0C],
    [0x0D, 0x0E, 0x0F, 0x10],
    [0x11, 0x12],
]
SPAWN_IDS = [0x02, 0x07, 0x08, 0x0A, 0x0B, 0x0E, 0x12]

# Orientation ID -> piece type (7 for anything else) and -> rotation index.
_TYPE_OF_ID = np.full(256, NO_PIECE, dtype=np.int64)
_ROTATION_OF_ID = np.zeros(256, dtype=np.int64)
for _piece, _ids in enumerate(ORIENTATIONS):
    for _rotation, _id in enumerate(_ids):
        _TYPE_OF_ID[_id] = _piece
        _ROTATION_OF_ID[_id] = _rotation

# The orientation ID a placement action's rotation index asks for, per piece type
# (indices past a type's orientations wrap around: S's rotation 2 is its rotation 0).
_TARGET_ID = np.zeros((NO_PIECE + 1, 4), dtype=np.uint8)
for _piece, _ids in enumerate(ORIENTATIONS):
    for _rotation in range(4):
        _TARGET_ID[_piece, _rotation] = _ids[_rotation % len(_ids)]
_TARGET_ID[NO_PIECE, :] = 0x13

MAX_LINES = 9999
MAX_SCORE = 999999 + 1  # the counter saturates at 999999; BCD bytes above 9 read higher
MAX_LEVEL = 255


def _bcd(byte: np.ndarray) -> np.ndarray:
    byte = byte.astype(np.int64)
    return (byte >> 4) * 10 + (byte & 0x0F)


def lines(ram: np.ndarray) -> np.ndarray:
    """Lines cleared (BCD at $0050-$0051) of each RAM row of ``ram`` (shape (..., 2048))."""
    return _bcd(ram[..., LINES + 1]) * 100 + _bcd(ram[..., LINES])


def score(ram: np.ndarray) -> np.ndarray:
    """The score (BCD at $0053-$0055)."""
    return (
        _bcd(ram[..., SCORE + 2]) * 10000
        + _bcd(ram[..., SCORE + 1]) * 100
        + _bcd(ram[..., SCORE])
    )


def board(ram: np.ndarray) -> np.ndarray:
    """The playfield as 0/1 ``uint8``, shape (..., 20, 10), row 0 at the top."""
    cells = ram[..., PLAYFIELD : PLAYFIELD + ROWS * COLUMNS]
    return (cells != EMPTY_SQUARE).astype(np.uint8).reshape(ram.shape[:-1] + (ROWS, COLUMNS))


def game_over(ram: np.ndarray) -> np.ndarray:
    """No game running (game mode other than 4) or the game-over curtain (play state 10)."""
    return (ram[..., GAME_MODE] != GAME_MODE_PLAYING) | (
        ram[..., PLAY_STATE] == PLAY_STATE_GAME_OVER
    )


def piece_type(ram: np.ndarray) -> np.ndarray:
    """The falling piece's type: 0-6 for T J Z O S L I, 7 for none."""
    return _TYPE_OF_ID[ram[..., TETRIMINO_ID]]


def target_ids(ram: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """The orientation ID rotation index ``rotation`` (0-3) asks of the falling piece."""
    return _TARGET_ID[piece_type(ram), np.asarray(rotation) % 4]


def state_observation_space() -> spaces.Dict:
    """The ``obs_type="state"`` space of one game."""
    return spaces.Dict(
        {
            "board": spaces.Box(0, 1, (ROWS, COLUMNS), np.uint8),
            "piece": spaces.Discrete(NO_PIECE + 1),
            "rotation": spaces.Discrete(4),
            "position": spaces.Box(0, 255, (2,), np.uint8),
            "next_piece": spaces.Discrete(NO_PIECE + 1),
            "stats": spaces.Box(
                0,
                np.array([MAX_LINES, MAX_SCORE * 2, MAX_LEVEL, 255]),
                (4,),
                np.int64,
            ),
        }
    )


def state_observation(ram: np.ndarray) -> dict:
    """The game's state from RAM (shape (2048,) or (n, 2048)): ``board`` (20x10 0/1),
    ``piece`` and ``next_piece`` (0-6 T J Z O S L I, 7 none), ``rotation`` (index into the
    piece's orientations), ``position`` (column, row), ``stats`` (lines, score, level, play
    state)."""
    ids = ram[..., TETRIMINO_ID]
    return {
        "board": board(ram),
        "piece": _TYPE_OF_ID[ids],
        "rotation": _ROTATION_OF_ID[ids],
        "position": np.stack([ram[..., TETRIMINO_X], ram[..., TETRIMINO_Y]], axis=-1),
        "next_piece": _TYPE_OF_ID[ram[..., NEXT_TETRIMINO_ID]],
        "stats": np.stack(
            [
                lines(ram),
                score(ram),
                ram[..., LEVEL].astype(np.int64),
                ram[..., PLAY_STATE].astype(np.int64),
            ],
            axis=-1,
        ),
    }


def start_game(console: Console, max_frames: int = 6000) -> None:
    """Presses Start (one frame down, seven up) until a game is on and its first piece is
    under control: through the legal screen, the title and the two menus (A-type, level 0
    and the first music on the real cartridge). Raises ``RuntimeError`` when that does not
    happen within ``max_frames`` frames (not NES Tetris?)."""
    ram = console.ram
    for frame in range(max_frames):
        if ram[GAME_MODE] == GAME_MODE_PLAYING and ram[PLAY_STATE] == PLAY_STATE_ACTIVE:
            return
        console.step(int(Button.START) if frame % 8 == 0 else 0, 1)
    raise RuntimeError(
        f"no game of NES Tetris started within {max_frames} frames of pressing Start "
        f"(game mode {ram[GAME_MODE]}, play state {ram[PLAY_STATE]}): is this NES Tetris?"
    )


def randomize_start(ram: np.ndarray, rng: np.random.Generator) -> None:
    """Varies a game's future from its start: new random-number seed bytes ($0017-$0018)
    and a random next piece. ``ram`` is a console's RAM array (written in place)."""
    seed = rng.integers(0, 256, size=2)
    ram[RNG_SEED : RNG_SEED + 2] = seed
    # The game's generator gets stuck on an all-zero seed.
    if not ram[RNG_SEED] and not ram[RNG_SEED + 1]:
        ram[RNG_SEED] = 1
    ram[NEXT_TETRIMINO_ID] = SPAWN_IDS[int(rng.integers(0, len(SPAWN_IDS)))]


def rewards(kind: str, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Reward of a step from the RAM before and after: score or lines gained."""
    if kind == "score":
        return (score(after) - score(before)).astype(np.float64)
    if kind == "lines":
        return (lines(after) - lines(before)).astype(np.float64)
    raise ValueError(f"reward must be 'score' or 'lines', not {kind!r}")


class TetrisEnv(gym.Env):
    """NES Tetris (the cartridge's own ROM, which the user supplies) as a Gymnasium
    environment.

    Args:
        rom: a path or the bytes of the NES Tetris ROM.
        action_mode: ``"placement"`` (default): ``Discrete(40)``, action ``a`` puts the
            falling piece at rotation index ``a // 10`` (0-3, into the piece's orientations
            in ID order, wrapping) and pivot column ``a % 10``; the
            environment presses the buttons (taps of A and Left/Right, then Down until the
            piece locks) and returns when the next piece is under control. A target that
            cannot be reached is approached as far as possible and the piece dropped there
            (``info["reached"]`` is False). ``"frame"``: ``Discrete(10)`` button
            combinations (``actions.TETRIS_MOVEMENT``) held for ``frame_skip`` frames.
        obs_type: ``"state"`` (a dict from RAM, see ``state_observation``), ``"ram"``,
            ``"rgb"`` or ``"index"``.
        reward: ``"score"`` (points gained) or ``"lines"`` (lines cleared).
        frame_skip: frames per step in frame mode.
        max_episode_steps: steps after which an episode is truncated.
        max_placement_frames: frames a placement may take at most.
        randomize: vary each episode (new random seed bytes and next piece from the
            environment's seeded generator); ``False`` starts every episode alike.
        start_frames: frames the first reset may press Start for before it decides the
            ROM is not NES Tetris (``RuntimeError``).

    The first ``reset`` presses Start through the menus until the game is on, and keeps a
    save state of that moment; each reset loads it (so resets cost one state load).
    ``info`` has ``lines``, ``score``, ``level``, ``frame`` and, after placements,
    ``frames`` (frames the placement ran), ``reached`` and ``locked``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 60}

    def __init__(
        self,
        rom: Any,
        *,
        action_mode: str = "placement",
        obs_type: str = "state",
        reward: str = "score",
        frame_skip: int = 1,
        max_episode_steps: Optional[int] = None,
        max_placement_frames: int = 2000,
        randomize: bool = True,
        render_mode: Optional[str] = None,
        power_on: str = "hardware",
        start_frames: int = 6000,
    ) -> None:
        if action_mode not in ("placement", "frame"):
            raise ValueError(f"action_mode must be 'placement' or 'frame', not {action_mode!r}")
        if reward not in ("score", "lines"):
            raise ValueError(f"reward must be 'score' or 'lines', not {reward!r}")
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, not {frame_skip}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', not {render_mode!r}")
        self.console = Console(rom, power_on=power_on)
        self.action_mode = action_mode
        self.obs_type = obs_type
        self.reward_kind = reward
        self.frame_skip = int(frame_skip)
        self.max_episode_steps = max_episode_steps
        self.max_placement_frames = int(max_placement_frames)
        self.randomize = randomize
        self.render_mode = render_mode
        self._buttons = action_table("tetris")
        if action_mode == "placement":
            self.action_space = spaces.Discrete(4 * COLUMNS)
        else:
            self.action_space = spaces.Discrete(len(self._buttons))
        if obs_type == "state":
            self.observation_space = state_observation_space()
        else:
            self.observation_space = observation_space(obs_type)
        start_game(self.console, start_frames)
        self._start_state = self.console.save_state()
        self._steps = 0

    def _observe(self):
        if self.obs_type == "state":
            return state_observation(self.console.ram)
        if self.obs_type == "rgb":
            return self.console.rgb()
        if self.obs_type == "index":
            return self.console.screen()
        return self.console.ram.copy()

    def _info(self, ram: np.ndarray) -> dict:
        return {
            "lines": int(lines(ram)),
            "score": int(score(ram)),
            "level": int(ram[LEVEL]),
            "frame": self.console.frame_count,
        }

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.console.load_state(self._start_state)
        if self.randomize:
            randomize_start(self.console.ram, self.np_random)
        self._steps = 0
        return self._observe(), self._info(self.console.ram)

    def step(self, action):
        action = int(action)
        ram = self.console.ram
        before = ram.copy()
        extra = {}
        if self.action_mode == "placement":
            rotation, column = divmod(action, COLUMNS)
            target = int(target_ids(before, rotation))
            frames, reached, locked, _ = self.console.tetris_place(
                target, column, self.max_placement_frames
            )
            extra = {"frames": frames, "reached": reached, "locked": locked}
        else:
            self.console.step(int(self._buttons[action]), self.frame_skip)
        self._steps += 1
        reward = float(rewards(self.reward_kind, before, ram))
        terminated = bool(game_over(ram))
        truncated = bool(
            self.max_episode_steps is not None and self._steps >= self.max_episode_steps
        )
        info = self._info(ram)
        info.update(extra)
        return self._observe(), reward, terminated, truncated, info

    def render(self):
        if self.render_mode == "rgb_array":
            return self.console.rgb()
        return None


__all__ = [
    "TetrisEnv",
    "ORIENTATIONS",
    "SPAWN_IDS",
    "PIECES",
    "board",
    "lines",
    "score",
    "game_over",
    "piece_type",
    "state_observation",
    "state_observation_space",
    "start_game",
    "target_ids",
    "randomize_start",
]

