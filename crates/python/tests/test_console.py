"""The Console class: loading (and refusing) ROMs, frames numbered as the CLI numbers them,
the RAM view, pictures, audio, save states, the GIL."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import cyclenes
from cyclenes import Button, Console


def test_bad_roms_raise_clear_exceptions(tmp_path):
    header = b"NES\x1a"
    cases = [
        (b"", ValueError, "not an iNES image"),
        (b"hello world, not a ROM", ValueError, "not an iNES image"),
        (header + bytes([2, 1, 0, 0]) + bytes(8) + bytes(100), ValueError, None),  # truncated
        (header + bytes([0, 0, 0, 0]) + bytes(8), ValueError, "PRG"),
        (header + bytes([1, 1, 0xF0, 0xF0]) + bytes(8) + bytes(0x6000), ValueError, "mapper"),
    ]
    for image, error, text in cases:
        with pytest.raises(error, match=text):
            Console(image)
        # bytearray and memoryview are bytes-like too.
        with pytest.raises(error):
            Console(bytearray(image))
        with pytest.raises(error):
            Console(memoryview(image))
    with pytest.raises(OSError, match="No such file"):
        Console(tmp_path / "missing.nes")
    with pytest.raises(OSError):
        Console(tmp_path)  # a folder
    with pytest.raises(TypeError, match="path"):
        Console(42)
    with pytest.raises(ValueError, match="power_on"):
        Console(b"", power_on="warm")
    with pytest.raises(ValueError, match="power_on_ram"):
        Console(b"", power_on_ram="random:x")
    with pytest.raises(ValueError, match="region"):
        Console(b"", region="secam")


def test_random_programs_run_without_errors():
    # Random PRG on NROM (the CPU may jam on a KIL opcode: the console goes on).
    rng = np.random.default_rng(21)
    for _ in range(12):
        prg = rng.integers(0, 256, size=0x8000, dtype=np.uint8).tobytes()
        console = Console(b"NES\x1a" + bytes([2, 1, 0, 0]) + bytes(8) + prg + bytes(0x2000))
        console.step(int(rng.integers(0, 256)), 20)
        assert console.frame_count == 20
        console.screen()
        console.load_state(console.save_state())


def test_bad_arguments_raise(copy_rom):
    console = Console(copy_rom)
    with pytest.raises(ValueError, match="buttons"):
        console.step(256)
    with pytest.raises(OverflowError):
        console.step(0, -1)
    with pytest.raises(ValueError):
        console.load_state(b"not a state")
    with pytest.raises(ValueError, match="palette"):
        console.set_palette(b"\x00" * 10)
    with pytest.raises(ValueError, match="sample_rate"):
        console.sample_rate = 5


def test_a_path_bytes_and_pathlike_give_the_same_console(mmc1_rom):
    by_path = Console(str(mmc1_rom))
    by_pathlike = Console(mmc1_rom)
    by_bytes = Console(mmc1_rom.read_bytes())
    for console in (by_path, by_pathlike, by_bytes):
        console.step(0, 30)
    assert np.array_equal(by_path.raw_screen(), by_bytes.raw_screen())
    assert np.array_equal(by_pathlike.ram, by_bytes.ram)
    info = by_path.rom_info()
    assert info["mapper"] == 1 and info["board"]
    assert info["md5"] == hashlib.md5(mmc1_rom.read_bytes()).hexdigest()


def _cli_hashes(nes_binary, rom, frames):
    out = subprocess.run(
        [str(nes_binary), "run", str(rom), "--frames", str(frames), "--no-battery"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return lines["frame sha1"], lines["ram sha1"], int(lines["lag frames"])


@pytest.mark.parametrize("frames", [1, 2, 61, 300])
def test_frame_n_is_the_clis_frame_n(nes_binary, mmc1_rom, nestest_rom, frames):
    for rom in (mmc1_rom, nestest_rom):
        console = Console(rom)
        console.step(0, frames)
        assert console.frame_count == frames
        frame_sha1 = hashlib.sha1(console.raw_screen().astype("<u2").tobytes()).hexdigest()
        ram_sha1 = hashlib.sha1(console.ram.tobytes()).hexdigest()
        assert (frame_sha1, ram_sha1, console.lag_count) == _cli_hashes(nes_binary, rom, frames)


def test_the_ram_array_is_the_consoles_ram(copy_rom):
    console = Console(copy_rom)
    ram = console.ram
    assert ram.dtype == np.uint8 and ram.shape == (2048,) and ram.flags.writeable
    assert console.ram is not None and np.shares_memory(ram, console.ram)
    console.step(0, 5)
    count = int(ram[0x302])
    assert count > 0, "the program runs NMIs"
    # Python writes; the CPU reads it at the next frame.
    ram[0x300] = 0x5A
    assert console.peek(0x0300) == 0x5A
    assert console.peek(0x0B00) == 0x5A  # a mirror
    console.step(0, 1)
    assert ram[0x301] == 0x5A
    assert ram[0x302] == (count + 1) & 0xFF
    # poke and peek go through the same memory.
    console.poke(0x0300, 0xA5)
    assert ram[0x300] == 0xA5
    console.step()
    assert ram[0x301] == 0xA5


def test_pictures(mmc1_rom):
    console = Console(mmc1_rom)
    console.step(0, 60)
    raw = console.raw_screen()
    index = console.screen()
    rgb = console.rgb()
    assert raw.shape == (240, 256) and raw.dtype == np.uint16
    assert index.shape == (240, 256) and index.dtype == np.uint8
    assert rgb.shape == (240, 256, 3) and rgb.dtype == np.uint8
    assert np.array_equal(index, raw & 0x3F)
    assert len(np.unique(index)) > 1, "the test ROM draws something"
    # A palette whose colour i is (i, 2i, 3i) shows the indices through rgb().
    colours = np.array([[i, 2 * i, 3 * i] for i in range(64)], dtype=np.uint8)
    console.set_palette(colours.tobytes())
    if not (raw >> 6).any():  # no emphasis
        assert np.array_equal(console.rgb(), colours[index])
    console.set_palette(None)
    assert np.array_equal(console.rgb(), rgb)


def test_audio(mmc1_rom):
    console = Console(mmc1_rom, sample_rate=48000)
    assert console.audio_samples().size == 0
    console.step(0, 60)
    samples = console.audio_samples()
    assert samples.dtype == np.float32
    # 60 NTSC frames are 0.998 s.
    assert abs(samples.size - 48000 * 60 / 60.0988) < 100
    assert np.all(np.abs(samples) <= 1.0)
    assert console.audio_samples().size == 0, "each call returns the new samples"
    console.sample_rate = 0
    console.step(0, 10)
    assert console.audio_samples().size == 0


def test_save_state_round_trip(mmc1_rom, copy_rom):
    console = Console(mmc1_rom)
    console.step(Button.START, 30)
    state = console.save_state()
    assert isinstance(state, bytes)
    frame = console.frame_count
    console.step(Button.A | Button.RIGHT, 40)
    after = (console.raw_screen(), console.ram.copy(), console.frame_count, console.lag_count)
    console.load_state(state)
    assert console.frame_count == frame
    console.step(Button.A | Button.RIGHT, 40)
    again = (console.raw_screen(), console.ram.copy(), console.frame_count, console.lag_count)
    assert np.array_equal(after[0], again[0]) and np.array_equal(after[1], again[1])
    assert after[2:] == again[2:]
    # Refused: another ROM's state, a corrupted one, a truncated one; the console is kept.
    other = Console(copy_rom).save_state()
    ram = console.ram.copy()
    with pytest.raises(ValueError, match="refused"):
        console.load_state(other)
    corrupt = bytearray(state)
    corrupt[len(corrupt) // 2] ^= 0xFF
    with pytest.raises(ValueError):
        console.load_state(bytes(corrupt))
    with pytest.raises(ValueError):
        console.load_state(state[:100])
    assert np.array_equal(console.ram, ram)


def test_clone_is_independent(mmc1_rom):
    console = Console(mmc1_rom)
    console.step(0, 20)
    copy = console.clone()
    copy.step(Button.START, 20)
    console.step(Button.START, 20)
    assert np.array_equal(copy.ram, console.ram)
    copy.ram[0] ^= 0xFF
    assert copy.ram[0] != console.ram[0]


def test_reset_and_power(copy_rom):
    console = Console(copy_rom)
    console.step(0, 10)
    console.ram[0x0400] = 0x77
    console.reset()
    assert console.ram[0x0400] == 0x77, "a soft reset keeps RAM"
    console.power()
    assert console.ram[0x0400] == 0, "power-on RAM is zeroed"
    assert console.frame_count == 10 and console.lag_count == 0
    fceux = Console(copy_rom, power_on="fceux")
    assert fceux.ram[4] == 0xFF, "FCEUX's power-on RAM pattern"


def test_the_gil_is_released_while_frames_run(mmc1_rom):
    console = Console(mmc1_rom)
    span = []

    def run():
        span.append(time.perf_counter())
        console.step(0, 300)
        span.append(time.perf_counter())

    # A long switch interval: the worker keeps the GIL from its start to the end of `step`
    # unless `step` itself releases it, so this thread can only record times inside the
    # step if it does.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        worker = threading.Thread(target=run)
        stamps = []
        worker.start()
        while worker.is_alive():
            stamps.append(time.perf_counter())
            time.sleep(0)  # lets the worker take the GIL back when it wants it
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    inside = sum(span[0] < stamp < span[1] for stamp in stamps)
    assert inside > 10, (inside, len(stamps))


@pytest.mark.skipif(os.cpu_count() == 1, reason="one core")
def test_batch_matches_single_consoles(mmc1_rom):
    rom = mmc1_rom.read_bytes()
    batch = cyclenes.ConsoleBatch(rom, 3, threads=2, render="rgb")
    singles = [Console(rom) for _ in range(3)]
    rng = np.random.default_rng(5)
    for _ in range(10):
        buttons = rng.integers(0, 256, size=3, dtype=np.uint8)
        pictures = batch.step(buttons, 3)
        for i, console in enumerate(singles):
            console.step(int(buttons[i]), 3)
            assert np.array_equal(pictures[i], console.rgb())
            assert np.array_equal(batch.ram[i], console.ram)
    assert list(batch.frame_counts()) == [30, 30, 30]
    # A mask steps some consoles only; the others keep their picture and count.
    mask = np.array([True, False, True])
    batch.step(np.zeros(3, np.uint8), 2, mask=mask)
    assert list(batch.frame_counts()) == [32, 30, 32]
    # Writes into the batch's RAM array reach console i only.
    batch.ram[1, 0x10] = 0x99
    assert batch.console(1).peek(0x10) == 0x99
    assert batch.console(0).peek(0x10) != 0x99 or singles[0].ram[0x10] == 0x99
    with pytest.raises(ValueError, match="entries"):
        batch.step(np.zeros(2, np.uint8))
    with pytest.raises(IndexError):
        batch.save_state(3)
    with pytest.raises(ValueError):
        batch.load_state(b"garbage")
    with pytest.raises(ValueError):
        cyclenes.ConsoleBatch(rom, 0)


def test_batch_threads_are_kept_and_share_out_every_console(mmc1_rom):
    rom = mmc1_rom.read_bytes()
    # More consoles than threads: each console is a task of its own on the batch's pool.
    batch = cyclenes.ConsoleBatch(rom, 5, threads=2, render="index")
    assert batch.threads == 2 and "on 2 threads" in repr(batch)
    assert cyclenes.ConsoleBatch(rom, 2, threads=8).threads == 2  # at most n
    quiet = cyclenes.ConsoleBatch(rom, 5, threads=2, render="none")
    single = Console(rom)
    buttons = np.array([0, 1, 2, 4, 8], np.uint8)
    for _ in range(3):
        pictures = batch.step(buttons, 2)
        assert quiet.step(buttons, 2) is None
        single.step(0, 2)
        assert pictures.shape == (5, 240, 256)
        assert np.array_equal(pictures[0], single.screen())
    assert list(batch.frame_counts()) == [6] * 5
    assert list(quiet.frame_counts()) == [6] * 5
    assert np.array_equal(quiet.ram[0], single.ram)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork()")
def test_batch_steps_in_a_forked_child(mmc1_rom):
    # The batch's threads are not inherited by a fork()ed child: the child must start its
    # own rather than wait for ever on the parent's.
    batch = cyclenes.ConsoleBatch(mmc1_rom, 3, threads=2, render="none")
    batch.step(np.zeros(3, np.uint8), 1)
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if the batch still steps
        code = 1
        try:
            batch.step(np.zeros(3, np.uint8), 2)
            code = 0 if list(batch.frame_counts()) == [3, 3, 3] else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's batch hung")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
    batch.step(np.zeros(3, np.uint8), 1)  # the parent's threads still work
    assert list(batch.frame_counts()) == [2, 2, 2]
