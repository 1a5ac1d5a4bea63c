#!/usr/bin/env python3
"""Writes the synthetic ROMs of the FCEUX parity suite (tests/fceux/roms/).

Run from anywhere: `python3 scripts/fceux-parity-roms.py`. The output is committed; this
script is how it was made (and how to change it: then record new FCEUX logs with
scripts/fceux-reference.py).

probe.nes (NROM-128, CHR RAM) exercises what FM2 movies and Lua scripts depend on:
- it never clears RAM, so the power-on fill stays visible ($0706-$073F and beyond);
- it boots like a game, through two $2002 VBlank polls (FCEUX's two inactive start-up
  frames and the PPU warm-up of a real console);
- its NMI counts frames and reads both controllers, except on every eighth NMI (a lag
  frame), keeping a history of the last 64 reads;
- it counts its boots ($0700) and finished boots ($0701), so resets and power cycles show.
Its main loop is a JMP to itself, so what an interrupt pushes is the same wherever it lands.

black.nes (NROM-128, CHR RAM) is a black screen for the Lua parity scripts' overlays: after
two VBlank polls it sets the backdrop to $0F (black in every NES palette), leaves rendering
off and turns NMI on; its NMI reads pad 1, so frames are not lag frames.
"""

import os
import sys


def assemble(origin, program):
    """Two passes over (label | (bytes, branch_label or None)) items."""
    labels = {}
    address = origin
    for item in program:
        if isinstance(item, str):
            labels[item] = address
        else:
            address += len(item[0]) + (1 if item[1] else 0)
    out = bytearray()
    address = origin
    for item in program:
        if isinstance(item, str):
            continue
        code, target = item
        out += bytes(code)
        address += len(code)
        if target:
            # A branch: the offset is from the next instruction.
            offset = labels[target] - (address + 1)
            assert -128 <= offset <= 127, target
            out.append(offset & 0xFF)
            address += 1
    return bytes(out), labels


def op(*code):
    return (list(code), None)


def branch(opcode, target):
    return ([opcode], target)


def lo(word):
    return word & 0xFF


def hi(word):
    return word >> 8


BOOTS, BOOTED, NMIS, PAD1, PAD2 = 0x0700, 0x0701, 0x0703, 0x0704, 0x0705
HISTORY1, HISTORY2 = 0x0740, 0x0780


def read_pad(port, store):
    """Strobe both pads, then shift eight bits of `port` into `store` (A ends in bit 7)."""
    return [
        op(0xA9, 0x01), op(0x8D, 0x16, 0x40),  # LDA #1; STA $4016
        op(0xA9, 0x00), op(0x8D, 0x16, 0x40),  # LDA #0; STA $4016
        op(0xA2, 0x08),  # LDX #8
        "read%d" % port,
        op(0xAD, lo(port), hi(port)),  # LDA $4016/$4017
        op(0x4A),  # LSR A
        op(0x2E, lo(store), hi(store)),  # ROL store
        op(0xCA),  # DEX
        branch(0xD0, "read%d" % port),  # BNE read
    ]


def probe():
    reset = [
        op(0x78), op(0xD8), op(0xA2, 0xFF), op(0x9A),  # SEI; CLD; LDX #$FF; TXS
        op(0xEE, lo(BOOTS), hi(BOOTS)),  # INC boots
        "vbl1",
        op(0x2C, 0x02, 0x20), branch(0x10, "vbl1"),  # BIT $2002; BPL
        "vbl2",
        op(0x2C, 0x02, 0x20), branch(0x10, "vbl2"),
        op(0xEE, lo(BOOTED), hi(BOOTED)),  # INC booted
        op(0xA9, 0x80), op(0x8D, 0x00, 0x20),  # NMI on
        "main",
        op(0x4C, 0x00, 0x00),  # JMP main (patched below)
    ]
    code, labels = assemble(0xC000, reset)
    main = labels["main"]
    code = code[:-2] + bytes([lo(main), hi(main)])
    nmi = [
        op(0x48), op(0x8A), op(0x48),  # PHA; TXA; PHA
        op(0xEE, lo(NMIS), hi(NMIS)),  # INC nmis
        op(0xAD, lo(NMIS), hi(NMIS)), op(0x29, 0x07),  # LDA nmis; AND #7
        branch(0xF0, "done"),  # BEQ done: every eighth NMI reads no pad (a lag frame)
        *read_pad(0x4016, PAD1),
        *read_pad(0x4017, PAD2),
        op(0xAD, lo(NMIS), hi(NMIS)), op(0x29, 0x3F), op(0xAA),  # X = nmis & 63
        op(0xAD, lo(PAD1), hi(PAD1)), op(0x9D, lo(HISTORY1), hi(HISTORY1)),  # STA h1,X
        op(0xAD, lo(PAD2), hi(PAD2)), op(0x9D, lo(HISTORY2), hi(HISTORY2)),  # STA h2,X
        "done",
        op(0x68), op(0xAA), op(0x68), op(0x40),  # PLA; TAX; PLA; RTI
    ]
    nmi_code, _ = assemble(0xC100, nmi)
    prg = bytearray([0xEA] * 0x4000)
    prg[0 : len(code)] = code
    prg[0x100 : 0x100 + len(nmi_code)] = nmi_code
    prg[0x200] = 0x40  # IRQ: RTI
    prg[0x3FFA:0x3FFC] = (0xC100).to_bytes(2, "little")
    prg[0x3FFC:0x3FFE] = (0xC000).to_bytes(2, "little")
    prg[0x3FFE:0x4000] = (0xC200).to_bytes(2, "little")
    header = bytes([0x4E, 0x45, 0x53, 0x1A, 1, 0, 0, 0] + [0] * 8)
    return header + bytes(prg)


def black():
    reset = [
        op(0x78), op(0xD8), op(0xA2, 0xFF), op(0x9A),  # SEI; CLD; LDX #$FF; TXS
        "vbl1",
        op(0x2C, 0x02, 0x20), branch(0x10, "vbl1"),  # BIT $2002; BPL
        "vbl2",
        op(0x2C, 0x02, 0x20), branch(0x10, "vbl2"),
        op(0xA9, 0x3F), op(0x8D, 0x06, 0x20),  # LDA #$3F; STA $2006
        op(0xA9, 0x00), op(0x8D, 0x06, 0x20),  # LDA #$00; STA $2006
        op(0xA9, 0x0F), op(0x8D, 0x07, 0x20),  # LDA #$0F; STA $2007: backdrop black
        # v back to $0000, so the rendering-off picture is the backdrop, not $3F01.
        op(0xA9, 0x00), op(0x8D, 0x06, 0x20), op(0x8D, 0x06, 0x20),
        op(0xA9, 0x80), op(0x8D, 0x00, 0x20),  # NMI on
        "main",
        op(0x4C, 0x00, 0x00),  # JMP main (patched below)
    ]
    code, labels = assemble(0xC000, reset)
    main = labels["main"]
    code = code[:-2] + bytes([lo(main), hi(main)])
    nmi = [
        op(0x48), op(0x8A), op(0x48),  # PHA; TXA; PHA
        *read_pad(0x4016, PAD1),
        op(0x68), op(0xAA), op(0x68), op(0x40),  # PLA; TAX; PLA; RTI
    ]
    nmi_code, _ = assemble(0xC100, nmi)
    prg = bytearray([0xEA] * 0x4000)
    prg[0 : len(code)] = code
    prg[0x100 : 0x100 + len(nmi_code)] = nmi_code
    prg[0x200] = 0x40  # IRQ: RTI
    prg[0x3FFA:0x3FFC] = (0xC100).to_bytes(2, "little")
    prg[0x3FFC:0x3FFE] = (0xC000).to_bytes(2, "little")
    prg[0x3FFE:0x4000] = (0xC200).to_bytes(2, "little")
    header = bytes([0x4E, 0x45, 0x53, 0x1A, 1, 0, 0, 0] + [0] * 8)
    return header + bytes(prg)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fceux", "roms")
    os.makedirs(out, exist_ok=True)
    for name, image in [("probe.nes", probe()), ("black.nes", black())]:
        path = os.path.join(out, name)
        with open(path, "wb") as f:
            f.write(image)
        print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    sys.exit(main())
