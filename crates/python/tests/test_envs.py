"""The Gymnasium environments: check_env, NES Tetris from RAM on the synthetic cartridge
(both action modes), and the vector environments' batching and autoreset."""
from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import cyclenes
import synthetic_tetris as synthetic
from cyclenes import tetris
from cyclenes.tetris import TetrisEnv


def _check(env):
    with warnings.catch_warnings():
        # Gymnasium warns that it cannot test other render modes without a registry spec.
        warnings.filterwarnings("ignore", message=".*spec.*")
        check_env(env)


@pytest.mark.parametrize("obs_type", ["rgb", "index", "ram"])
def test_nes_env_passes_check_env(mmc1_rom, obs_type):
    _check(cyclenes.NesEnv(mmc1_rom, obs_type=obs_type, render_mode="rgb_array"))


@pytest.mark.parametrize(
    "action_mode, obs_type", [("placement", "state"), ("frame", "ram"), ("placement", "rgb")]
)
def test_tetris_env_passes_check_env(tetris_rom, action_mode, obs_type):
    _check(TetrisEnv(tetris_rom, action_mode=action_mode, obs_type=obs_type, render_mode="rgb_array"))


def test_registered_with_gymnasium(tetris_rom):
    env = gymnasium.make("cyclenes/Tetris-v0", rom=tetris_rom, max_episode_steps=3)
    env.reset(seed=0)
    for _ in range(3):
        *_, truncated, _ = env.step(0)
    assert truncated


def test_nes_env_steps_frame_skip_frames_and_resets_to_power_on(mmc1_rom):
    env = cyclenes.NesEnv(mmc1_rom, frame_skip=4, actions="complex", max_episode_steps=3)
    first, info = env.reset(seed=1)
    assert info["frame"] == 0
    assert env.action_space.n == 12
    assert env.get_action_meanings()[2] == "A+RIGHT"
    for step in range(1, 4):
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert info["frame"] == 4 * step
        assert reward == 0.0 and not terminated
    assert truncated
    again, info = env.reset()
    assert info["frame"] == 0 and np.array_equal(first, again)
    _, info = env.reset(options={"noop_max": 30})
    assert 0 <= info["frame"] <= 30
    with pytest.raises(ValueError, match="unknown button"):
        cyclenes.NesEnv(mmc1_rom, actions=[["jump"]])
    with pytest.raises(ValueError, match="frame_skip"):
        cyclenes.NesEnv(mmc1_rom, frame_skip=0)


def test_nes_env_reward_and_done_functions_see_ram(copy_rom):
    counter = lambda before, after: float(after[0x302]) - float(before[0x302])  # noqa: E731
    env = cyclenes.NesEnv(
        copy_rom,
        obs_type="ram",
        frame_skip=2,
        reward_fn=counter,
        done_fn=lambda before, after: after[0x302] >= 20,
    )
    observation, _ = env.reset(seed=0)
    total, terminated = 0.0, False
    while not terminated:
        observation, reward, terminated, _, _ = env.step(0)
        total += reward
    assert observation[0x302] >= 20 and total == observation[0x302]


def test_tetris_state_comes_from_ram(tetris_rom):
    env = TetrisEnv(tetris_rom, randomize=False)
    obs, info = env.reset(seed=0)
    # What the synthetic program wrote at the game's start.
    assert info["lines"] == synthetic.START_LINES
    assert info["score"] == synthetic.START_SCORE
    assert info["level"] == synthetic.START_LEVEL
    assert obs["piece"] == tetris.PIECES.index("T") and obs["rotation"] == 2
    assert obs["next_piece"] == tetris.PIECES.index("J")
    assert list(obs["position"]) == [5, 0]
    assert list(obs["stats"]) == [12, 123456, 7, 1]
    expected = np.zeros((20, 10), np.uint8)
    expected[10, ::2] = 1
    assert np.array_equal(obs["board"], expected)


def test_tetris_placement_actions_drive_the_piece_until_it_locks(tetris_rom):
    env = TetrisEnv(tetris_rom, randomize=False, reward="lines")
    env.reset(seed=0)
    # T: rotation 0 (ID $00, two A presses from $02), column 3 (two Left taps).
    obs, reward, terminated, truncated, info = env.step(0 * 10 + 3)
    assert info["reached"] and info["locked"]
    assert reward == 1.0 and not terminated and not truncated
    assert obs["board"][19, 3] == 1, "the lock mark at the target column"
    assert obs["piece"] == tetris.PIECES.index("J") and obs["rotation"] == 3
    assert obs["next_piece"] == tetris.PIECES.index("L")
    assert list(obs["position"]) == [5, 0]
    # J: rotation 1 (ID $05: A twice from $07), column 9 (four Right taps).
    obs, reward, *_ , info = env.step(1 * 10 + 9)
    assert obs["board"][18, 9] == 1 and info["reached"]
    assert env.console.ram[0x42] == 0x0E, "L came in from next"
    # Score reward: 100 per lock on this cartridge.
    scored = TetrisEnv(tetris_rom, randomize=False, reward="score")
    scored.reset(seed=0)
    assert scored.step(5)[1] == 100.0
    # The fifth lock ends the game.
    rewards = [env.step(action)[1] for action in (25, 0)]
    *_, info = env.step(7)
    obs, reward, terminated, truncated, info = env.step(7)
    assert terminated and not truncated and info["lines"] == 17
    assert obs["stats"][3] == tetris.PLAY_STATE_GAME_OVER
    assert rewards == [1.0, 1.0]


def test_the_placement_driver_gives_up_on_unreachable_targets(tetris_rom):
    env = TetrisEnv(tetris_rom, randomize=False)
    env.reset(seed=0)
    # Column 12 does not exist: the piece stops at 9, the driver drops it there.
    frames, reached, locked, game_over = env.console.tetris_place(0x02, 12)
    assert (reached, locked, game_over) == (False, True, False)
    assert env.console.ram[0x0400 + 190 + 9] == 0x7B
    assert frames < 40


def test_tetris_frame_actions(tetris_rom):
    env = TetrisEnv(tetris_rom, action_mode="frame", randomize=False)
    obs, _ = env.reset(seed=0)
    names = [[name.lower() for name in action] for action in cyclenes.actions.TETRIS_MOVEMENT]
    left, noop, down, a = names.index(["left"]), names.index(["noop"]), names.index(["down"]), names.index(["a"])
    for action in (left, noop, left, a):
        obs, *_ = env.step(action)
    assert list(obs["position"]) == [3, 0] and obs["rotation"] == 3
    for _ in range(4):
        obs, reward, *_ = env.step(down)
    obs, reward, *_ = env.step(noop)
    assert obs["board"][19, 3] == 1 and reward == 100.0


def test_tetris_reset_is_seeded(tetris_rom):
    env = TetrisEnv(tetris_rom)
    nexts = set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        nexts.add(int(obs["next_piece"]))
        assert env.reset(seed=seed)[0]["next_piece"] == obs["next_piece"]
    assert len(nexts) > 1, "seeds vary the next piece"


def test_tetris_refuses_a_rom_that_is_not_tetris(copy_rom):
    with pytest.raises(RuntimeError, match="is this NES Tetris"):
        TetrisEnv(copy_rom, start_frames=300)


def test_nes_vector_env_autoresets_on_the_next_step(mmc1_rom):
    envs = cyclenes.NesVectorEnv(mmc1_rom, 3, max_episode_steps=2, frame_skip=2, threads=2)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.observation_space.shape == (3, 240, 256, 3)
    first, info = envs.reset(seed=0)
    assert list(info["frame"]) == [0, 0, 0]
    actions = np.array([1, 2, 3])
    obs, rewards, terminated, truncated, info = envs.step(actions)
    assert list(info["frame"]) == [2, 2, 2] and not truncated.any()
    obs, rewards, terminated, truncated, info = envs.step(actions)
    assert truncated.all() and not terminated.any()
    # The step after the end resets: first observation, reward 0, no flags, frame 0.
    obs, rewards, terminated, truncated, info = envs.step(actions)
    assert list(info["frame"]) == [0, 0, 0]
    assert np.array_equal(obs, first)
    assert not truncated.any() and not terminated.any() and not rewards.any()
    obs, *_ , info = envs.step(actions)
    assert list(info["frame"]) == [2, 2, 2]
    envs.close()


def test_vector_env_equals_single_envs(mmc1_rom):
    rom = mmc1_rom.read_bytes()
    envs = cyclenes.NesVectorEnv(rom, 2, obs_type="ram", actions="all", threads=2)
    singles = [cyclenes.NesEnv(rom, obs_type="ram", actions="all") for _ in range(2)]
    observations, _ = envs.reset(seed=0)
    for i, env in enumerate(singles):
        assert np.array_equal(env.reset(seed=0)[0], observations[i])
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = rng.integers(0, 256, size=2)
        observations, *_ = envs.step(actions)
        for i, env in enumerate(singles):
            assert np.array_equal(env.step(actions[i])[0], observations[i])


def test_tetris_vector_env_autoresets_after_game_over(tetris_rom):
    envs = cyclenes.TetrisVectorEnv(tetris_rom, 2, randomize=False, reward="lines", threads=2)
    obs, info = envs.reset(seed=0)
    assert list(info["lines"]) == [12, 12]
    assert obs["board"].shape == (2, 20, 10)
    # Env 0 plays 5 placements to game over; env 1 the same, one step behind (its first
    # action is a placement too: both lock each step).
    for step in range(1, 6):
        obs, rewards, terminated, truncated, info = envs.step(np.array([3, 7]))
        assert list(rewards) == [1.0, 1.0]
        assert list(terminated) == [step == 5, step == 5]
    assert list(info["lines"]) == [17, 17]
    obs, rewards, terminated, truncated, info = envs.step(np.array([3, 7]))
    assert list(info["lines"]) == [12, 12] and not rewards.any() and not terminated.any()
    assert obs["board"][0, 19].sum() == 0, "a fresh playfield"
    obs, rewards, terminated, truncated, info = envs.step(np.array([3, 7]))
    assert obs["board"][0, 19, 3] == 1 and obs["board"][1, 19, 7] == 1
    # Frame mode, masked resets through options.
    frames = cyclenes.TetrisVectorEnv(tetris_rom, 2, action_mode="frame", obs_type="ram", randomize=False)
    ram, _ = frames.reset(seed=0)
    left = 1
    ram, *_ = frames.step(np.array([left, left]))
    assert list(ram[:, 0x40]) == [4, 4]
    ram, _ = frames.reset(options={"reset_mask": np.array([True, False])})
    assert list(ram[:, 0x40]) == [5, 4]
