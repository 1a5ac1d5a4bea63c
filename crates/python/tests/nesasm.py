"""A tiny two-pass 6502 assembler and iNES image builder for the tests' synthetic ROMs.

Only what the test programs use: the addressing modes below and labels (as absolute
operands, branch targets, and ``lo``/``hi`` bytes of a label's address). No commercial ROM
is needed anywhere: the tests make their cartridges here.
"""
from __future__ import annotations

from typing import Dict, List, Tuple, Union

# (mnemonic, mode) -> opcode. Modes: imp (implied/accumulator), imm, zp, abs, abx (abs,X),
# rel (branches).
OPCODES: Dict[Tuple[str, str], int] = {
    ("lda", "imm"): 0xA9, ("lda", "zp"): 0xA5, ("lda", "abs"): 0xAD, ("lda", "abx"): 0xBD,
    ("sta", "zp"): 0x85, ("sta", "abs"): 0x8D, ("sta", "abx"): 0x9D,
    ("ldx", "imm"): 0xA2, ("ldx", "zp"): 0xA6, ("ldy", "imm"): 0xA0,
    ("inx", "imp"): 0xE8, ("dex", "imp"): 0xCA, ("iny", "imp"): 0xC8, ("dey", "imp"): 0x88,
    ("inc", "zp"): 0xE6, ("dec", "zp"): 0xC6,
    ("cmp", "imm"): 0xC9, ("cmp", "zp"): 0xC5, ("cpx", "imm"): 0xE0,
    ("and", "imm"): 0x29, ("and", "zp"): 0x25, ("ora", "imm"): 0x09, ("eor", "imm"): 0x49,
    ("adc", "imm"): 0x69, ("adc", "zp"): 0x65, ("clc", "imp"): 0x18, ("sec", "imp"): 0x38,
    ("lsr", "imp"): 0x4A, ("rol", "zp"): 0x26,
    ("tax", "imp"): 0xAA, ("txa", "imp"): 0x8A, ("txs", "imp"): 0x9A,
    ("sei", "imp"): 0x78, ("cld", "imp"): 0xD8,
    ("beq", "rel"): 0xF0, ("bne", "rel"): 0xD0, ("bcc", "rel"): 0x90, ("bcs", "rel"): 0xB0,
    ("jmp", "abs"): 0x4C, ("jsr", "abs"): 0x20, ("rts", "imp"): 0x60, ("rti", "imp"): 0x40,
}
SIZES = {"imp": 1, "imm": 2, "zp": 2, "abs": 3, "abx": 3, "rel": 2}

Operand = Union[int, str, Tuple[str, str], None]
Line = Union[str, Tuple, bytes]


def assemble(lines: List[Line], origin: int) -> Tuple[bytes, Dict[str, int]]:
    """Assembles ``lines``: a ``"label:"`` string, ``(mnemonic, mode[, operand])`` or raw
    ``bytes`` (tables). Operands are numbers, label names or ``("lo"|"hi", label)``."""
    labels: Dict[str, int] = {}
    address = origin
    for line in lines:
        if isinstance(line, str):
            labels[line.rstrip(":")] = address
        elif isinstance(line, bytes):
            address += len(line)
        else:
            address += SIZES[line[1]]

    def value(operand: Operand) -> int:
        if isinstance(operand, tuple):
            part, name = operand
            full = labels[name]
            return full & 0xFF if part == "lo" else full >> 8
        if isinstance(operand, str):
            return labels[operand]
        return int(operand)

    out = bytearray()
    address = origin
    for line in lines:
        if isinstance(line, str):
            continue
        if isinstance(line, bytes):
            out += line
            address += len(line)
            continue
        mnemonic, mode = line[0], line[1]
        operand = line[2] if len(line) > 2 else None
        out.append(OPCODES[(mnemonic, mode)])
        if mode in ("imm", "zp"):
            out.append(value(operand) & 0xFF)
        elif mode in ("abs", "abx"):
            out += value(operand).to_bytes(2, "little")
        elif mode == "rel":
            offset = value(operand) - (address + 2)
            if not -128 <= offset <= 127:
                raise ValueError(f"branch to {operand} out of range ({offset})")
            out.append(offset & 0xFF)
        address += SIZES[mode]
    return bytes(out), labels


def nrom_image(program: List[Line], reset: str = "reset", nmi: str = "nmi") -> bytes:
    """An NROM-256 iNES image (mapper 0, 32 KiB PRG, 8 KiB CHR of zeros) with ``program``
    at $8000 and the vectors pointing at its ``reset`` and ``nmi`` labels (IRQ -> NMI)."""
    code, labels = assemble(program, 0x8000)
    prg = bytearray([0xEA] * 0x8000)
    prg[: len(code)] = code
    prg[0x7FFA:0x7FFC] = labels[nmi].to_bytes(2, "little")
    prg[0x7FFC:0x7FFE] = labels[reset].to_bytes(2, "little")
    prg[0x7FFE:0x8000] = labels[nmi].to_bytes(2, "little")
    header = b"NES\x1a" + bytes([2, 1, 0x01, 0x00]) + bytes(8)
    return header + bytes(prg) + bytes(0x2000)
