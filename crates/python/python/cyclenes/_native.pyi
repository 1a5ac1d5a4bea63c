"""Type stubs of the Rust extension ``cyclenes._native`` (see the docstrings at run time)."""
import os
from typing import Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

RomSource = Union[str, os.PathLike, bytes, bytearray, memoryview]

SCREEN_WIDTH: int
SCREEN_HEIGHT: int
RAM_SIZE: int
STATE_FORMAT_VERSION: int

class Console:
    """One NES console with a cartridge inserted; powers on as ``nes run ROM`` does."""

    def __init__(
        self,
        rom: RomSource,
        *,
        power_on: str = "hardware",
        power_on_ram: Optional[str] = None,
        region: Optional[str] = None,
        sample_rate: int = 0,
    ) -> None: ...
    def step(self, buttons: int = 0, frames: int = 1, buttons2: int = 0) -> None:
        """Runs ``frames`` frames holding ``buttons`` (GIL released)."""
    def reset(self) -> None:
        """Soft reset (the reset button)."""
    def power(self) -> None:
        """Power cycle."""
    @property
    def frame_count(self) -> int: ...
    @property
    def lag_count(self) -> int: ...
    @property
    def lagged(self) -> bool: ...
    @property
    def ram(self) -> npt.NDArray[np.uint8]:
        """CPU RAM, writable, shape (2048,): the same array every time."""
    def peek(self, address: int) -> int: ...
    def poke(self, address: int, value: int) -> None: ...
    def screen(self) -> npt.NDArray[np.uint8]:
        """Palette indices, shape (240, 256)."""
    def raw_screen(self) -> npt.NDArray[np.uint16]:
        """9-bit pixels (index | emphasis << 6), shape (240, 256)."""
    def rgb(self) -> npt.NDArray[np.uint8]:
        """RGB through the palette, shape (240, 256, 3)."""
    def set_palette(self, pal: Optional[bytes] = None) -> None: ...
    def audio_samples(self) -> npt.NDArray[np.float32]: ...
    @property
    def sample_rate(self) -> int: ...
    @sample_rate.setter
    def sample_rate(self, hz: int) -> None: ...
    def save_state(self) -> bytes: ...
    def load_state(self, state: bytes) -> None: ...
    def clone(self) -> "Console": ...
    def __copy__(self) -> "Console": ...
    def __deepcopy__(self, memo: object) -> "Console": ...
    @property
    def region(self) -> str: ...
    def rom_info(self) -> dict: ...
    def tetris_place(
        self, piece_id: int, x: int, max_frames: int = 2000
    ) -> Tuple[int, bool, bool, bool]:
        """NES Tetris: (frames, reached, locked, game_over) of a placement."""

class ConsoleBatch:
    """N consoles of one ROM stepped together on ``threads`` native threads (default: the
    machine's cores, at most n): the calling thread, with the GIL released, and a pool of
    ``threads - 1`` started with the batch and reused by every call; each console is a task
    that the first free thread takes."""

    def __init__(
        self,
        rom: RomSource,
        n: int,
        *,
        threads: Optional[int] = None,
        render: str = "rgb",
        power_on: str = "hardware",
        power_on_ram: Optional[str] = None,
        region: Optional[str] = None,
    ) -> None: ...
    def __len__(self) -> int: ...
    @property
    def threads(self) -> int:
        """Native threads that step the consoles, the calling one included (``threads``, at
        most n)."""
    @property
    def render(self) -> str: ...
    def step(
        self,
        buttons: npt.NDArray[np.uint8],
        frames: int = 1,
        mask: Optional[npt.NDArray[np.bool_]] = None,
    ) -> Optional[npt.NDArray[np.uint8]]: ...
    def observe(self) -> Optional[npt.NDArray[np.uint8]]: ...
    @property
    def ram(self) -> npt.NDArray[np.uint8]:
        """CPU RAM of every console, writable, shape (n, 2048)."""
    def frame_counts(self) -> npt.NDArray[np.uint64]: ...
    def lag_counts(self) -> npt.NDArray[np.uint64]: ...
    def save_state(self, i: int) -> bytes: ...
    def load_state(self, state: bytes, mask: Optional[npt.NDArray[np.bool_]] = None) -> None: ...
    def console(self, i: int) -> Console: ...
    def reset(self, mask: Optional[npt.NDArray[np.bool_]] = None) -> None: ...
    def power(self, mask: Optional[npt.NDArray[np.bool_]] = None) -> None: ...
    def tetris_place(
        self,
        targets: npt.NDArray[np.uint8],
        mask: Optional[npt.NDArray[np.bool_]] = None,
        max_frames: int = 2000,
    ) -> Tuple[
        npt.NDArray[np.uint32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        Optional[npt.NDArray[np.uint8]],
    ]: ...
