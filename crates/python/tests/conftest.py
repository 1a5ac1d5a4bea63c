"""Shared fixtures: the public test ROMs (``$NES_TEST_ROMS``, else ``../shared/test-roms``
beside the repository, as the Rust suites find them), the release ``nes`` binary, and the
synthetic ROMs. Without the public ROMs the tests that need them are skipped, except under
``CI=true``, where they fail: CI must never pass vacuously."""
from __future__ import annotations

import os
import pathlib

import pytest

import synthetic_tetris
from nesasm import nrom_image

REPO = pathlib.Path(__file__).resolve().parents[3]


def _missing(what: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} missing under CI=true")
    pytest.skip(f"{what} missing: skipped")


@pytest.fixture(scope="session")
def test_roms() -> pathlib.Path:
    folder = pathlib.Path(os.environ.get("NES_TEST_ROMS", REPO.parent / "shared" / "test-roms"))
    if not folder.is_dir():
        _missing(f"test ROMs ({folder})")
    return folder


@pytest.fixture(scope="session")
def mmc1_rom(test_roms) -> pathlib.Path:
    return test_roms / "mapper" / "holy-mapperel" / "M1_P128K_C32K.nes"


@pytest.fixture(scope="session")
def nestest_rom(test_roms) -> pathlib.Path:
    return test_roms / "cpu" / "nestest" / "nestest.nes"


@pytest.fixture(scope="session")
def nes_binary() -> pathlib.Path:
    binary = pathlib.Path(os.environ.get("NES_RELEASE_BIN", REPO / "target" / "release" / "nes"))
    if not binary.is_file():
        _missing(f"the release binary {binary} (cargo build --release -p nes-app)")
    return binary


@pytest.fixture(scope="session")
def tetris_rom() -> bytes:
    return synthetic_tetris.image()


@pytest.fixture(scope="session")
def copy_rom() -> bytes:
    """Each frame (on NMI) copies RAM $0300 to $0301 and counts frames at $0302: shows
    whether the CPU sees what Python wrote into the RAM array."""
    return nrom_image(
        [
            "reset:",
            ("sei", "imp"), ("ldx", "imm", 0xFF), ("txs", "imp"),
            "loop:",
            ("lda", "imm", 0x80), ("sta", "abs", 0x2000), ("jmp", "abs", "loop"),
            "nmi:",
            ("lda", "abs", 0x0300), ("sta", "abs", 0x0301),
            ("inc", "zp", 0x02), ("lda", "zp", 0x02), ("sta", "abs", 0x0302),
            ("lda", "abs", 0x4016),
            ("rti", "imp"),
        ]
    )
