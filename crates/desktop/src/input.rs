//! Keyboard and gamepad input: the names used in the config file, the bindings built from it,
//! and the held-button state that becomes the two controllers' input each frame.

use std::collections::HashMap;
use std::hash::Hash;

use gilrs::Button as PadButton;
use nes::Buttons;
use winit::keyboard::KeyCode;

use super::config::{Config, HotkeyBindings, PadBindings};

/// The frontend's own controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hotkey {
    Pause,
    FrameAdvance,
    SoftReset,
    PowerCycle,
    /// Held.
    FastForward,
    SpeedToggle,
    SaveState,
    LoadState,
    NextSlot,
    PreviousSlot,
    SelectSlot(u8),
    /// Held.
    Rewind,
    Screenshot,
    VolumeUp,
    VolumeDown,
    Mute,
    Fullscreen,
    PixelAspect,
    /// The open-file dialog (a game or a Lua script).
    OpenFile,
    /// Stop the Lua script, or start it again (afresh) when stopped.
    ToggleScript,
    Quit,
}

impl Hotkey {
    /// Hotkeys that act while held, and so also report their release.
    pub fn is_held(self) -> bool {
        matches!(self, Hotkey::FastForward | Hotkey::Rewind)
    }

    /// Hotkeys that repeat when the key auto-repeats (the others act once per press).
    fn repeats(self) -> bool {
        matches!(
            self,
            Hotkey::FrameAdvance | Hotkey::VolumeUp | Hotkey::VolumeDown
        )
    }
}

/// What a key or gamepad button does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A controller button on port 0 or 1.
    Pad {
        port: usize,
        button: Buttons,
    },
    Hotkey(Hotkey),
}

/// A hotkey press, or the release of a held hotkey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HotkeyEvent {
    pub hotkey: Hotkey,
    pub pressed: bool,
}

/// Bindings from one kind of input (keyboard keys or gamepad buttons) to actions.
#[derive(Debug, Clone)]
pub struct Bindings<K> {
    actions: HashMap<K, Vec<Action>>,
}

impl<K: Copy + Eq + Hash> Bindings<K> {
    fn new() -> Bindings<K> {
        Bindings {
            actions: HashMap::new(),
        }
    }

    fn bind(
        &mut self,
        names: &[String],
        action: Action,
        parse: fn(&str) -> Option<K>,
        what: &str,
    ) -> Result<(), String> {
        for name in names.iter().filter(|name| !name.is_empty()) {
            let key = parse(name).ok_or_else(|| format!("{what}: unknown name \"{name}\""))?;
            let actions = self.actions.entry(key).or_default();
            if !actions.contains(&action) {
                actions.push(action);
            }
        }
        Ok(())
    }

    fn bind_pad(
        &mut self,
        port: usize,
        pad: &PadBindings,
        parse: fn(&str) -> Option<K>,
        section: &str,
    ) -> Result<(), String> {
        let buttons = [
            ("a", &pad.a, Buttons::A),
            ("b", &pad.b, Buttons::B),
            ("select", &pad.select, Buttons::SELECT),
            ("start", &pad.start, Buttons::START),
            ("up", &pad.up, Buttons::UP),
            ("down", &pad.down, Buttons::DOWN),
            ("left", &pad.left, Buttons::LEFT),
            ("right", &pad.right, Buttons::RIGHT),
        ];
        for (field, names, button) in buttons {
            let what = format!("{section}.{field}");
            self.bind(names, Action::Pad { port, button }, parse, &what)?;
        }
        Ok(())
    }

    fn bind_hotkeys(
        &mut self,
        hotkeys: &HotkeyBindings,
        parse: fn(&str) -> Option<K>,
        section: &str,
    ) -> Result<(), String> {
        let singles = [
            ("pause", &hotkeys.pause, Hotkey::Pause),
            (
                "frame_advance",
                &hotkeys.frame_advance,
                Hotkey::FrameAdvance,
            ),
            ("soft_reset", &hotkeys.soft_reset, Hotkey::SoftReset),
            ("power_cycle", &hotkeys.power_cycle, Hotkey::PowerCycle),
            ("fast_forward", &hotkeys.fast_forward, Hotkey::FastForward),
            ("speed_toggle", &hotkeys.speed_toggle, Hotkey::SpeedToggle),
            ("save_state", &hotkeys.save_state, Hotkey::SaveState),
            ("load_state", &hotkeys.load_state, Hotkey::LoadState),
            ("next_slot", &hotkeys.next_slot, Hotkey::NextSlot),
            (
                "previous_slot",
                &hotkeys.previous_slot,
                Hotkey::PreviousSlot,
            ),
            ("rewind", &hotkeys.rewind, Hotkey::Rewind),
            ("screenshot", &hotkeys.screenshot, Hotkey::Screenshot),
            ("volume_up", &hotkeys.volume_up, Hotkey::VolumeUp),
            ("volume_down", &hotkeys.volume_down, Hotkey::VolumeDown),
            ("mute", &hotkeys.mute, Hotkey::Mute),
            ("fullscreen", &hotkeys.fullscreen, Hotkey::Fullscreen),
            ("pixel_aspect", &hotkeys.pixel_aspect, Hotkey::PixelAspect),
            ("open_file", &hotkeys.open_file, Hotkey::OpenFile),
            ("lua_script", &hotkeys.lua_script, Hotkey::ToggleScript),
            ("quit", &hotkeys.quit, Hotkey::Quit),
        ];
        for (field, names, hotkey) in singles {
            let what = format!("{section}.{field}");
            self.bind(names, Action::Hotkey(hotkey), parse, &what)?;
        }
        for (slot, name) in (0u8..).zip(&hotkeys.slots) {
            let what = format!("{section}.slots[{slot}]");
            let action = Action::Hotkey(Hotkey::SelectSlot(slot));
            self.bind(std::slice::from_ref(name), action, parse, &what)?;
        }
        Ok(())
    }

    pub fn actions(&self, key: K) -> &[Action] {
        self.actions
            .get(&key)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// All bindings, built from the config.
#[derive(Debug, Clone)]
pub struct InputMap {
    pub keyboard: Bindings<KeyCode>,
    pub gamepad: Bindings<PadButton>,
}

impl InputMap {
    /// Build the bindings; an unknown key or button name is an error naming the setting.
    pub fn from_config(config: &Config) -> Result<InputMap, String> {
        let mut keyboard = Bindings::new();
        keyboard.bind_pad(
            0,
            &config.keyboard.player1,
            key_from_name,
            "keyboard.player1",
        )?;
        keyboard.bind_pad(
            1,
            &config.keyboard.player2,
            key_from_name,
            "keyboard.player2",
        )?;
        keyboard.bind_hotkeys(&config.keyboard.hotkeys, key_from_name, "keyboard.hotkeys")?;
        let mut gamepad = Bindings::new();
        gamepad.bind_pad(
            0,
            &config.gamepad.buttons,
            pad_button_from_name,
            "gamepad.buttons",
        )?;
        gamepad.bind_hotkeys(
            &config.gamepad.hotkeys,
            pad_button_from_name,
            "gamepad.hotkeys",
        )?;
        Ok(InputMap { keyboard, gamepad })
    }
}

/// One connected gamepad's held buttons and stick.
#[derive(Debug, Clone, Default)]
struct PadState {
    held: Vec<PadButton>,
    stick_x: f32,
    stick_y: f32,
}

/// What is held right now on the keyboard and every gamepad.
#[derive(Debug, Clone)]
pub struct InputState {
    map: InputMap,
    keys_held: Vec<KeyCode>,
    /// Connected gamepads (by gilrs id) in connection order: the first is player 1, the
    /// second player 2.
    pads: Vec<(usize, PadState)>,
    stick_threshold: f32,
}

impl InputState {
    pub fn new(map: InputMap, stick_threshold: f32) -> InputState {
        InputState {
            map,
            keys_held: Vec::new(),
            pads: Vec::new(),
            stick_threshold,
        }
    }

    /// A key went down or up; returns the hotkey events it causes.
    pub fn key(&mut self, key: KeyCode, pressed: bool, repeat: bool) -> Vec<HotkeyEvent> {
        let was_held = self.keys_held.contains(&key);
        if pressed && !was_held {
            self.keys_held.push(key);
        } else if !pressed {
            self.keys_held.retain(|&held| held != key);
        }
        hotkey_events(
            self.map.keyboard.actions(key),
            pressed,
            repeat || (pressed && was_held),
        )
    }

    /// The keyboard keys held now (whatever they are bound to).
    pub fn keys_held(&self) -> &[KeyCode] {
        &self.keys_held
    }

    /// Forget held keys (the window lost focus: their releases will not arrive).
    pub fn release_all_keys(&mut self) -> Vec<HotkeyEvent> {
        let keys = std::mem::take(&mut self.keys_held);
        keys.into_iter()
            .flat_map(|key| hotkey_events(self.map.keyboard.actions(key), false, false))
            .collect()
    }

    /// A gamepad was connected; returns the player number it plays as (1 or 2), if any.
    pub fn gamepad_connected(&mut self, id: usize) -> Option<usize> {
        if !self.pads.iter().any(|(pad, _)| *pad == id) {
            self.pads.push((id, PadState::default()));
        }
        self.player_of(id)
    }

    pub fn gamepad_disconnected(&mut self, id: usize) -> Vec<HotkeyEvent> {
        let Some(index) = self.pads.iter().position(|(pad, _)| *pad == id) else {
            return Vec::new();
        };
        let (_, state) = self.pads.remove(index);
        state
            .held
            .into_iter()
            .flat_map(|button| hotkey_events(self.map.gamepad.actions(button), false, false))
            .collect()
    }

    /// Player number (1 or 2) of a connected gamepad; later pads play as nobody.
    pub fn player_of(&self, id: usize) -> Option<usize> {
        self.pads
            .iter()
            .position(|(pad, _)| *pad == id)
            .filter(|&index| index < 2)
            .map(|index| index + 1)
    }

    pub fn gamepad_button(
        &mut self,
        id: usize,
        button: PadButton,
        pressed: bool,
    ) -> Vec<HotkeyEvent> {
        if self.player_of(id).is_none() {
            self.gamepad_connected(id);
        }
        let Some((_, state)) = self.pads.iter_mut().find(|(pad, _)| *pad == id) else {
            return Vec::new();
        };
        let was_held = state.held.contains(&button);
        if pressed && !was_held {
            state.held.push(button);
        } else if !pressed {
            state.held.retain(|&held| held != button);
        }
        if pressed == was_held {
            return Vec::new();
        }
        hotkey_events(self.map.gamepad.actions(button), pressed, false)
    }

    /// The left stick moved (x right, y up, -1.0..=1.0).
    pub fn gamepad_stick(&mut self, id: usize, x: Option<f32>, y: Option<f32>) {
        if let Some((_, state)) = self.pads.iter_mut().find(|(pad, _)| *pad == id) {
            state.stick_x = x.unwrap_or(state.stick_x);
            state.stick_y = y.unwrap_or(state.stick_y);
        }
    }

    /// The buttons held on controller `port` (0 or 1) from all sources.
    pub fn buttons(&self, port: usize) -> Buttons {
        let mut buttons = Buttons::empty();
        for &key in &self.keys_held {
            buttons |= pad_buttons(self.map.keyboard.actions(key), port);
        }
        if let Some((_, pad)) = self.pads.get(port) {
            // Gamepads are assigned to ports in connection order, whatever port their
            // bindings name.
            for &button in &pad.held {
                buttons |= pad_buttons(self.map.gamepad.actions(button), 0);
            }
            let t = self.stick_threshold;
            if pad.stick_x > t {
                buttons |= Buttons::RIGHT;
            } else if pad.stick_x < -t {
                buttons |= Buttons::LEFT;
            }
            if pad.stick_y > t {
                buttons |= Buttons::UP;
            } else if pad.stick_y < -t {
                buttons |= Buttons::DOWN;
            }
        }
        buttons
    }
}

fn pad_buttons(actions: &[Action], port: usize) -> Buttons {
    actions
        .iter()
        .filter_map(|action| match *action {
            Action::Pad { port: p, button } if p == port => Some(button),
            _ => None,
        })
        .fold(Buttons::empty(), |all, button| all | button)
}

fn hotkey_events(actions: &[Action], pressed: bool, repeat: bool) -> Vec<HotkeyEvent> {
    actions
        .iter()
        .filter_map(|action| match *action {
            Action::Hotkey(hotkey) => Some(hotkey),
            Action::Pad { .. } => None,
        })
        .filter(|hotkey| {
            if pressed {
                !repeat || hotkey.repeats()
            } else {
                hotkey.is_held()
            }
        })
        .map(|hotkey| HotkeyEvent { hotkey, pressed })
        .collect()
}

/// Key names as the config file spells them, and the keys they mean.
const KEY_NAMES: &[(&str, KeyCode)] = &[
    ("A", KeyCode::KeyA),
    ("B", KeyCode::KeyB),
    ("C", KeyCode::KeyC),
    ("D", KeyCode::KeyD),
    ("E", KeyCode::KeyE),
    ("F", KeyCode::KeyF),
    ("G", KeyCode::KeyG),
    ("H", KeyCode::KeyH),
    ("I", KeyCode::KeyI),
    ("J", KeyCode::KeyJ),
    ("K", KeyCode::KeyK),
    ("L", KeyCode::KeyL),
    ("M", KeyCode::KeyM),
    ("N", KeyCode::KeyN),
    ("O", KeyCode::KeyO),
    ("P", KeyCode::KeyP),
    ("Q", KeyCode::KeyQ),
    ("R", KeyCode::KeyR),
    ("S", KeyCode::KeyS),
    ("T", KeyCode::KeyT),
    ("U", KeyCode::KeyU),
    ("V", KeyCode::KeyV),
    ("W", KeyCode::KeyW),
    ("X", KeyCode::KeyX),
    ("Y", KeyCode::KeyY),
    ("Z", KeyCode::KeyZ),
    ("0", KeyCode::Digit0),
    ("1", KeyCode::Digit1),
    ("2", KeyCode::Digit2),
    ("3", KeyCode::Digit3),
    ("4", KeyCode::Digit4),
    ("5", KeyCode::Digit5),
    ("6", KeyCode::Digit6),
    ("7", KeyCode::Digit7),
    ("8", KeyCode::Digit8),
    ("9", KeyCode::Digit9),
    ("F1", KeyCode::F1),
    ("F2", KeyCode::F2),
    ("F3", KeyCode::F3),
    ("F4", KeyCode::F4),
    ("F5", KeyCode::F5),
    ("F6", KeyCode::F6),
    ("F7", KeyCode::F7),
    ("F8", KeyCode::F8),
    ("F9", KeyCode::F9),
    ("F10", KeyCode::F10),
    ("F11", KeyCode::F11),
    ("F12", KeyCode::F12),
    ("Up", KeyCode::ArrowUp),
    ("Down", KeyCode::ArrowDown),
    ("Left", KeyCode::ArrowLeft),
    ("Right", KeyCode::ArrowRight),
    ("Enter", KeyCode::Enter),
    ("Space", KeyCode::Space),
    ("Tab", KeyCode::Tab),
    ("Backspace", KeyCode::Backspace),
    ("Escape", KeyCode::Escape),
    ("LShift", KeyCode::ShiftLeft),
    ("RShift", KeyCode::ShiftRight),
    ("LCtrl", KeyCode::ControlLeft),
    ("RCtrl", KeyCode::ControlRight),
    ("LAlt", KeyCode::AltLeft),
    ("RAlt", KeyCode::AltRight),
    ("Minus", KeyCode::Minus),
    ("Equal", KeyCode::Equal),
    ("Backquote", KeyCode::Backquote),
    ("Backslash", KeyCode::Backslash),
    ("BracketLeft", KeyCode::BracketLeft),
    ("BracketRight", KeyCode::BracketRight),
    ("Semicolon", KeyCode::Semicolon),
    ("Quote", KeyCode::Quote),
    ("Comma", KeyCode::Comma),
    ("Period", KeyCode::Period),
    ("Slash", KeyCode::Slash),
    ("Insert", KeyCode::Insert),
    ("Delete", KeyCode::Delete),
    ("Home", KeyCode::Home),
    ("End", KeyCode::End),
    ("PageUp", KeyCode::PageUp),
    ("PageDown", KeyCode::PageDown),
    ("Pause", KeyCode::Pause),
    ("Numpad0", KeyCode::Numpad0),
    ("Numpad1", KeyCode::Numpad1),
    ("Numpad2", KeyCode::Numpad2),
    ("Numpad3", KeyCode::Numpad3),
    ("Numpad4", KeyCode::Numpad4),
    ("Numpad5", KeyCode::Numpad5),
    ("Numpad6", KeyCode::Numpad6),
    ("Numpad7", KeyCode::Numpad7),
    ("Numpad8", KeyCode::Numpad8),
    ("Numpad9", KeyCode::Numpad9),
    ("NumpadEnter", KeyCode::NumpadEnter),
    ("NumpadAdd", KeyCode::NumpadAdd),
    ("NumpadSubtract", KeyCode::NumpadSubtract),
];

/// The key a config name means (letters in either case).
pub fn key_from_name(name: &str) -> Option<KeyCode> {
    KEY_NAMES
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, key)| key)
}

/// The config name of a key, if it has one.
#[cfg(test)]
fn key_name(key: KeyCode) -> Option<&'static str> {
    KEY_NAMES
        .iter()
        .find(|&&(_, known)| known == key)
        .map(|&(name, _)| name)
}

const PAD_BUTTON_NAMES: &[(&str, PadButton)] = &[
    ("South", PadButton::South),
    ("East", PadButton::East),
    ("North", PadButton::North),
    ("West", PadButton::West),
    ("LeftTrigger", PadButton::LeftTrigger),
    ("LeftTrigger2", PadButton::LeftTrigger2),
    ("RightTrigger", PadButton::RightTrigger),
    ("RightTrigger2", PadButton::RightTrigger2),
    ("Select", PadButton::Select),
    ("Start", PadButton::Start),
    ("Mode", PadButton::Mode),
    ("LeftThumb", PadButton::LeftThumb),
    ("RightThumb", PadButton::RightThumb),
    ("DPadUp", PadButton::DPadUp),
    ("DPadDown", PadButton::DPadDown),
    ("DPadLeft", PadButton::DPadLeft),
    ("DPadRight", PadButton::DPadRight),
];

pub fn pad_button_from_name(name: &str) -> Option<PadButton> {
    PAD_BUTTON_NAMES
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, button)| button)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_state() -> InputState {
        let config = Config::default();
        InputState::new(InputMap::from_config(&config).unwrap(), 0.5)
    }

    #[test]
    fn default_keys_follow_the_usual_layout() {
        let mut input = default_state();
        input.key(KeyCode::KeyX, true, false);
        input.key(KeyCode::ArrowLeft, true, false);
        input.key(KeyCode::Enter, true, false);
        assert_eq!(
            input.buttons(0),
            Buttons::A | Buttons::LEFT | Buttons::START
        );
        assert_eq!(input.buttons(1), Buttons::empty());
        input.key(KeyCode::KeyX, false, false);
        assert_eq!(input.buttons(0), Buttons::LEFT | Buttons::START);
        input.key(KeyCode::KeyZ, true, false);
        input.key(KeyCode::ShiftRight, true, false);
        assert!(input.buttons(0).contains(Buttons::B | Buttons::SELECT));
    }

    #[test]
    fn hotkeys_fire_once_per_press_and_held_ones_report_release() {
        let mut input = default_state();
        let save = input.key(KeyCode::F5, true, false);
        assert_eq!(
            save,
            [HotkeyEvent {
                hotkey: Hotkey::SaveState,
                pressed: true
            }]
        );
        assert!(input.key(KeyCode::F5, true, true).is_empty(), "auto-repeat");
        assert!(input.key(KeyCode::F5, false, false).is_empty());
        assert_eq!(
            input.key(KeyCode::Tab, true, false)[0].hotkey,
            Hotkey::FastForward
        );
        let release = input.key(KeyCode::Tab, false, false);
        assert_eq!(
            release,
            [HotkeyEvent {
                hotkey: Hotkey::FastForward,
                pressed: false
            }]
        );
        assert_eq!(
            input.key(KeyCode::Digit3, true, false)[0].hotkey,
            Hotkey::SelectSlot(3)
        );
        assert_eq!(
            input.key(KeyCode::Backslash, true, true).len(),
            1,
            "frame advance repeats"
        );
        // Hotkeys never reach the console.
        assert_eq!(input.buttons(0), Buttons::empty());
    }

    #[test]
    fn losing_focus_releases_everything() {
        let mut input = default_state();
        input.key(KeyCode::ArrowUp, true, false);
        input.key(KeyCode::Backspace, true, false);
        let events = input.release_all_keys();
        assert_eq!(
            events,
            [HotkeyEvent {
                hotkey: Hotkey::Rewind,
                pressed: false
            }]
        );
        assert_eq!(input.buttons(0), Buttons::empty());
    }

    #[test]
    fn remapped_keys_and_player_two() {
        let mut config = Config::default();
        config.keyboard.player1.a = vec!["k".into(), "Space".into()];
        config.keyboard.player2.up = vec!["W".into()];
        config.keyboard.hotkeys.pause = vec![];
        let mut input = InputState::new(InputMap::from_config(&config).unwrap(), 0.5);
        input.key(KeyCode::KeyK, true, false);
        input.key(KeyCode::KeyW, true, false);
        assert!(input.key(KeyCode::KeyP, true, false).is_empty());
        assert_eq!(input.buttons(0), Buttons::A);
        assert_eq!(input.buttons(1), Buttons::UP);
        input.key(KeyCode::KeyX, true, false);
        assert_eq!(input.buttons(0), Buttons::A, "X is no longer bound");
    }

    #[test]
    fn unknown_names_are_errors_naming_the_setting() {
        let mut config = Config::default();
        config.keyboard.player1.start = vec!["Entr".into()];
        let err = InputMap::from_config(&config).unwrap_err();
        assert!(
            err.contains("keyboard.player1.start") && err.contains("Entr"),
            "{err}"
        );
        let mut config = Config::default();
        config.gamepad.hotkeys.rewind = vec!["L3".into()];
        let err = InputMap::from_config(&config).unwrap_err();
        assert!(err.contains("gamepad.hotkeys.rewind"), "{err}");
    }

    #[test]
    fn gamepads_play_in_connection_order_with_stick_as_dpad() {
        let mut input = default_state();
        assert_eq!(input.gamepad_connected(7), Some(1));
        assert_eq!(input.gamepad_connected(3), Some(2));
        assert_eq!(
            input.gamepad_connected(9),
            None,
            "a third pad plays as nobody"
        );
        input.gamepad_button(7, PadButton::East, true);
        input.gamepad_button(3, PadButton::South, true);
        input.gamepad_button(3, PadButton::Start, true);
        assert_eq!(input.buttons(0), Buttons::A);
        assert_eq!(input.buttons(1), Buttons::B | Buttons::START);
        input.gamepad_stick(7, Some(0.9), Some(-0.2));
        assert_eq!(input.buttons(0), Buttons::A | Buttons::RIGHT);
        input.gamepad_stick(7, None, Some(-0.8));
        assert_eq!(
            input.buttons(0),
            Buttons::A | Buttons::RIGHT | Buttons::DOWN
        );
        // Unplugging player 1 makes the second pad player 1 and releases its held hotkeys.
        input.gamepad_button(7, PadButton::LeftTrigger2, true);
        let released = input.gamepad_disconnected(7);
        assert_eq!(
            released,
            [HotkeyEvent {
                hotkey: Hotkey::Rewind,
                pressed: false
            }]
        );
        assert_eq!(input.player_of(3), Some(1));
        assert_eq!(input.buttons(0), Buttons::B | Buttons::START);
        assert_eq!(input.buttons(1), Buttons::empty());
    }

    #[test]
    fn gamepad_hotkeys() {
        let mut input = default_state();
        input.gamepad_connected(0);
        let events = input.gamepad_button(0, PadButton::RightTrigger2, true);
        assert_eq!(events[0].hotkey, Hotkey::FastForward);
        assert!(input
            .gamepad_button(0, PadButton::RightTrigger2, true)
            .is_empty());
        assert!(!input
            .gamepad_button(0, PadButton::RightTrigger2, false)
            .is_empty());
        assert_eq!(input.buttons(0), Buttons::empty());
    }

    #[test]
    fn every_key_name_round_trips() {
        for &(name, key) in KEY_NAMES {
            assert_eq!(key_from_name(name), Some(key));
            assert_eq!(key_name(key), Some(name));
        }
        for &(name, button) in PAD_BUTTON_NAMES {
            assert_eq!(pad_button_from_name(&name.to_lowercase()), Some(button));
        }
    }
}
