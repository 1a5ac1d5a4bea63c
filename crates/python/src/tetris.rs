//! NES Tetris: where the game keeps its state in CPU RAM, and the placement driver that
//! presses the buttons to put the falling piece at a chosen column and orientation.
//!
//! The RAM map is Data Crystal's "Tetris (NES, Nintendo)/RAM map"
//! (<https://datacrystal.tcrf.net/wiki/Tetris_(NES,_Nintendo)/RAM_map>), whose `$0040`-`$005F`
//! block is the active player's copy (the game mirrors it at `$0060`, which meatfighter's AI,
//! "Applying Artificial Intelligence to Nintendo Tetris", reads); game mode 4 with play
//! state below 9 is "playing" and play state 10 the game-over curtain, as that AI tests.
//! The Python side (`cyclenes/tetris.py`) reads the same addresses for observations.

use nes::{Buttons, Nes};

/// Column of the falling piece's pivot, 0-9.
pub(crate) const TETRIMINO_X: usize = 0x40;
/// The falling piece's orientation ID, 0-18 (`$13`: none).
pub(crate) const TETRIMINO_ID: usize = 0x42;
/// Play state: 1 while the player controls the piece, 2-8 from its lock to the next spawn,
/// 10 the game-over curtain.
pub(crate) const PLAY_STATE: usize = 0x48;
/// Game mode: 4 while a game is on (0-3 are the legal screen, title and menus).
pub(crate) const GAME_MODE: usize = 0xC0;

const PLAY_STATE_ACTIVE: u8 = 1;
const PLAY_STATE_GAME_OVER: u8 = 10;
const GAME_MODE_PLAYING: u8 = 4;

/// Presses while steering before the driver gives up on a target it cannot reach (a wall or
/// the stack in the way) and drops the piece where it is: at most 3 rotations and 9 shifts
/// are ever needed, and each may take a few tries.
const MAX_STEERING_PRESSES: u32 = 24;
/// Presses in a row that changed nothing before the driver calls the piece stuck.
const MAX_FUTILE_PRESSES: u32 = 3;

/// What a placement did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Frames run.
    pub(crate) frames: u32,
    /// The piece reached the target column and orientation before it was dropped.
    pub(crate) reached: bool,
    /// The piece locked (and the next one spawned, or the game ended).
    pub(crate) locked: bool,
    /// The game is over (or no game is running).
    pub(crate) game_over: bool,
}

pub(crate) fn game_over(ram: &[u8]) -> bool {
    ram[GAME_MODE] != GAME_MODE_PLAYING || ram[PLAY_STATE] == PLAY_STATE_GAME_OVER
}

fn active(ram: &[u8]) -> bool {
    ram[GAME_MODE] == GAME_MODE_PLAYING && ram[PLAY_STATE] == PLAY_STATE_ACTIVE
}

/// Drives the falling piece to orientation `target_id` and pivot column `target_x`, drops it
/// with Down until it locks, and runs on until the next piece is under control (or the game
/// ends), within `max_frames` frames.
///
/// Presses are taps (one frame pressed, one released): the game acts on newly pressed
/// buttons, and a held direction would only repeat after its 16-frame delay. Rotation (A)
/// and a shift go in the same frame, as a player can press them.
pub(crate) fn place(nes: &mut Nes, target_id: u8, target_x: u8, max_frames: u32) -> Placement {
    let mut out = Placement::default();
    let step = |nes: &mut Nes, buttons: Buttons, out: &mut Placement| {
        nes.set_buttons(0, buttons);
        nes.run_frame();
        out.frames += 1;
    };
    // A piece under control first (a call made during a line clear or a spawn waits).
    while !active(nes.ram()) {
        if game_over(nes.ram()) || out.frames >= max_frames {
            out.game_over = game_over(nes.ram());
            return out;
        }
        step(nes, Buttons::empty(), &mut out);
    }
    // Steer.
    let (mut presses, mut futile, mut released) = (0, 0, true);
    while active(nes.ram()) && out.frames < max_frames {
        let ram = nes.ram();
        let (id, x) = (ram[TETRIMINO_ID], ram[TETRIMINO_X]);
        let mut want = Buttons::empty();
        if id != target_id {
            want |= Buttons::A;
        }
        if x < target_x {
            want |= Buttons::RIGHT;
        } else if x > target_x {
            want |= Buttons::LEFT;
        }
        if want.is_empty() {
            out.reached = true;
            break;
        }
        if presses >= MAX_STEERING_PRESSES || futile >= MAX_FUTILE_PRESSES {
            break;
        }
        if !released {
            step(nes, Buttons::empty(), &mut out);
            released = true;
            continue;
        }
        step(nes, want, &mut out);
        released = false;
        presses += 1;
        let ram = nes.ram();
        if (ram[TETRIMINO_ID], ram[TETRIMINO_X]) == (id, x) {
            futile += 1;
        } else {
            futile = 0;
        }
    }
    // Drop: hold Down (soft drop) until the piece locks.
    while active(nes.ram()) && out.frames < max_frames {
        step(nes, Buttons::DOWN, &mut out);
    }
    out.locked = !active(nes.ram());
    // Line clears, the score update and the next spawn.
    while out.locked && !active(nes.ram()) && !game_over(nes.ram()) && out.frames < max_frames {
        step(nes, Buttons::empty(), &mut out);
    }
    out.game_over = game_over(nes.ram());
    nes.set_buttons(0, Buttons::empty());
    out
}
