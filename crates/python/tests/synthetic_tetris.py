"""A synthetic cartridge that keeps NES Tetris's state where the real game does (see
``cyclenes.tetris`` for the RAM map) and reacts to the controller the way the environment's
driving logic expects, so ``TetrisEnv`` is tested without the commercial ROM:

- at power-on: game mode 1 (title); a newly pressed Start starts a game (game mode 4, play
  state 1): playfield empty ($EF) but for row 10's even columns ($7B), falling piece T at
  its spawn orientation ($02) at column 5, next piece J ($07), level 7, 12 lines (BCD
  $0012), score 123456 (BCD $56 $34 $12);
- while the piece is under control: a newly pressed A steps the orientation ID through
  the piece's orientations in ID order, newly pressed Left/Right
  move the column (0-9), and Down held for 4 frames locks the piece (play state 2);
- the frame after a lock: the playfield square at (row 19 - locks, column) becomes $7B,
  lines +1 and score +100 (BCD), the next piece falls from column 5 and a new next piece
  comes from a fixed list (L, I, O, S, Z); the 5th lock ends the game (play state 10).

The main loop runs once per NMI (one game frame per video frame), as the real game does.
"""
from __future__ import annotations

from nesasm import nrom_image

# Zero-page variables of the synthetic program itself (outside the Tetris RAM map).
NMI_COUNT, SEEN, HELD, PREVIOUS, NEW, DOWN_FRAMES, LOCKS = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16

X, Y, ID, LEVEL, PLAY_STATE = 0x40, 0x41, 0x42, 0x44, 0x48
LINES, SCORE, NEXT, GAME_MODE = 0x50, 0x53, 0xBF, 0xC0

# Buttons as the program's pad reading leaves them (the real game's ABsSUDLR order).
PAD_A, PAD_START, PAD_DOWN, PAD_LEFT, PAD_RIGHT = 0x80, 0x10, 0x04, 0x02, 0x01

# Orientation ID -> the next one A gives (T 00-03, J 04-07, Z 08-09, O 0A, S 0B-0C,
# L 0D-10, I 11-12; $13 stays).
ROTATE = bytes([1, 2, 3, 0, 5, 6, 7, 4, 9, 8, 0x0A, 0x0C, 0x0B, 0x0E, 0x0F, 0x10, 0x0D, 0x12, 0x11, 0x13])
# Next pieces after each lock (index = locks so far; index 0 unused).
NEXT_PIECES = bytes([0x07, 0x0E, 0x12, 0x0A, 0x0B, 0x08])
# Playfield offset of row 19 - locks.
LOCK_ROWS = bytes([190, 180, 170, 160, 150, 140])

START_LINES = 12
START_SCORE = 123456
START_LEVEL = 7
LOCKS_TO_GAME_OVER = 5


def program():
    return [
        "reset:",
        ("sei", "imp"), ("cld", "imp"), ("ldx", "imm", 0xFF), ("txs", "imp"),
        ("lda", "imm", 1), ("sta", "zp", GAME_MODE),
        ("lda", "imm", 0), ("sta", "zp", PLAY_STATE),
        "main:",
        # NMI on, again every time: the PPU ignores $2000 until its warm-up ends.
        ("lda", "imm", 0x80), ("sta", "abs", 0x2000),
        ("lda", "zp", NMI_COUNT), ("cmp", "zp", SEEN), ("beq", "rel", "main"),
        ("sta", "zp", SEEN),
        ("jsr", "abs", "read_pad"),
        ("jsr", "abs", "logic"),
        ("jmp", "abs", "main"),
        "nmi:",
        ("inc", "zp", NMI_COUNT), ("rti", "imp"),
        # The pad into HELD (A in bit 7 ... Right in bit 0), newly pressed into NEW.
        "read_pad:",
        ("lda", "zp", HELD), ("sta", "zp", PREVIOUS),
        ("lda", "imm", 1), ("sta", "abs", 0x4016), ("lda", "imm", 0), ("sta", "abs", 0x4016),
        ("ldx", "imm", 8),
        "read_bit:",
        ("lda", "abs", 0x4016), ("lsr", "imp"), ("rol", "zp", HELD), ("dex", "imp"),
        ("bne", "rel", "read_bit"),
        ("lda", "zp", PREVIOUS), ("eor", "imm", 0xFF), ("and", "zp", HELD), ("sta", "zp", NEW),
        ("rts", "imp"),
        "logic:",
        ("lda", "zp", GAME_MODE), ("cmp", "imm", 4), ("beq", "rel", "playing"),
        ("lda", "zp", NEW), ("and", "imm", PAD_START), ("beq", "rel", "logic_done"),
        ("jsr", "abs", "new_game"),
        "logic_done:",
        ("rts", "imp"),
        "playing:",
        ("lda", "zp", PLAY_STATE), ("cmp", "imm", 1), ("beq", "rel", "active"),
        ("cmp", "imm", 2), ("bne", "rel", "logic_done"),
        ("jmp", "abs", "lock"),
        "active:",
        ("lda", "zp", NEW), ("and", "imm", PAD_A), ("beq", "rel", "no_a"),
        ("ldx", "zp", ID), ("lda", "abx", "rotate"), ("sta", "zp", ID),
        "no_a:",
        ("lda", "zp", NEW), ("and", "imm", PAD_LEFT), ("beq", "rel", "no_left"),
        ("lda", "zp", X), ("beq", "rel", "no_left"), ("dec", "zp", X),
        "no_left:",
        ("lda", "zp", NEW), ("and", "imm", PAD_RIGHT), ("beq", "rel", "no_right"),
        ("lda", "zp", X), ("cmp", "imm", 9), ("beq", "rel", "no_right"), ("inc", "zp", X),
        "no_right:",
        ("lda", "zp", HELD), ("and", "imm", PAD_DOWN), ("beq", "rel", "no_down"),
        ("inc", "zp", DOWN_FRAMES), ("lda", "zp", DOWN_FRAMES), ("cmp", "imm", 4),
        ("bcc", "rel", "active_done"),
        ("lda", "imm", 2), ("sta", "zp", PLAY_STATE),
        ("rts", "imp"),
        "no_down:",
        ("lda", "imm", 0), ("sta", "zp", DOWN_FRAMES),
        "active_done:",
        ("rts", "imp"),
        "lock:",
        ("ldx", "zp", LOCKS), ("lda", "abx", "lock_rows"), ("clc", "imp"), ("adc", "zp", X),
        ("tax", "imp"), ("lda", "imm", 0x7B), ("sta", "abx", 0x0400),
        # Lines and score in BCD: the tests stay below a digit carry (12-17 lines,
        # 1234xx points).
        ("inc", "zp", LINES), ("inc", "zp", SCORE + 1),
        ("lda", "zp", NEXT), ("sta", "zp", ID),
        ("inc", "zp", LOCKS),
        ("ldx", "zp", LOCKS), ("lda", "abx", "next_pieces"), ("sta", "zp", NEXT),
        ("lda", "imm", 5), ("sta", "zp", X), ("lda", "imm", 0), ("sta", "zp", Y),
        ("sta", "zp", DOWN_FRAMES),
        ("lda", "zp", LOCKS), ("cmp", "imm", LOCKS_TO_GAME_OVER), ("beq", "rel", "game_over"),
        ("lda", "imm", 1), ("sta", "zp", PLAY_STATE),
        ("rts", "imp"),
        "game_over:",
        ("lda", "imm", 10), ("sta", "zp", PLAY_STATE),
        ("rts", "imp"),
        "new_game:",
        ("ldx", "imm", 0), ("lda", "imm", 0xEF),
        "clear:",
        ("sta", "abx", 0x0400), ("inx", "imp"), ("cpx", "imm", 200), ("bne", "rel", "clear"),
        ("ldx", "imm", 0), ("lda", "imm", 0x7B),
        "pattern:",
        ("sta", "abx", 0x0400 + 100), ("inx", "imp"), ("inx", "imp"), ("cpx", "imm", 10),
        ("bcc", "rel", "pattern"),
        ("lda", "imm", 4), ("sta", "zp", GAME_MODE),
        ("lda", "imm", 1), ("sta", "zp", PLAY_STATE),
        ("lda", "imm", 5), ("sta", "zp", X), ("lda", "imm", 0), ("sta", "zp", Y),
        ("sta", "zp", LOCKS), ("sta", "zp", DOWN_FRAMES),
        ("lda", "imm", 0x02), ("sta", "zp", ID), ("lda", "imm", 0x07), ("sta", "zp", NEXT),
        ("lda", "imm", START_LEVEL), ("sta", "zp", LEVEL),
        ("lda", "imm", 0x12), ("sta", "zp", LINES), ("lda", "imm", 0x00), ("sta", "zp", LINES + 1),
        ("lda", "imm", 0x56), ("sta", "zp", SCORE), ("lda", "imm", 0x34), ("sta", "zp", SCORE + 1),
        ("lda", "imm", 0x12), ("sta", "zp", SCORE + 2),
        ("rts", "imp"),
        "rotate:",
        ROTATE,
        "next_pieces:",
        NEXT_PIECES,
        "lock_rows:",
        LOCK_ROWS,
    ]


def image() -> bytes:
    """The synthetic Tetris cartridge as an iNES image."""
    return nrom_image(program())
