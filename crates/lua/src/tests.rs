//! Acceptance tests of spec section 9 on synthetic ROMs built here.

use super::*;

/// Resource bounds: the watchdog, memory, drawing with extreme values, file sizes.
mod limits;

/// iNES image: NROM (mapper 0) or MMC1 (mapper 1), PRG as given, 8 KiB CHR RAM.
fn image(mapper: u8, prg: &[u8]) -> Vec<u8> {
    nes::ines_image(mapper, prg, &[])
}

/// Main loop that keeps NMI enabled (writes during the PPU warm-up are ignored).
const NMI_LOOP: [u8; 5] = [0xA9, 0x80, 0x8D, 0x00, 0x20];

/// 32 KiB NROM PRG: `once` at $8000 then a loop enabling NMI; `nmi` at $8100; the IRQ vector
/// points at an RTI.
fn nrom(once: &[u8], nmi: &[u8]) -> Vec<u8> {
    let mut prg = vec![0xEA; 0x8000];
    prg[..once.len()].copy_from_slice(once);
    let lp = 0x8000 + once.len() as u16;
    let mut tail = NMI_LOOP.to_vec();
    tail.extend_from_slice(&[0x4C, lp as u8, (lp >> 8) as u8]);
    prg[once.len()..once.len() + tail.len()].copy_from_slice(&tail);
    let mut nmi = nmi.to_vec();
    if nmi.is_empty() {
        nmi.push(0x40);
    }
    prg[0x100..0x100 + nmi.len()].copy_from_slice(&nmi);
    prg[0x7FF0] = 0x40;
    prg[0x7FFA..0x7FFC].copy_from_slice(&0x8100u16.to_le_bytes());
    prg[0x7FFC..0x7FFE].copy_from_slice(&0x8000u16.to_le_bytes());
    prg[0x7FFE..0x8000].copy_from_slice(&0xFFF0u16.to_le_bytes());
    image(0, &prg)
}

/// NMI handler: strobe pad 1 and shift its 8 buttons into $00 (A ends in bit 7), then RTI.
const READ_PAD_NMI: [u8; 21] = [
    0xA9, 0x01, 0x8D, 0x16, 0x40, // LDA #1; STA $4016
    0xA9, 0x00, 0x8D, 0x16, 0x40, // LDA #0; STA $4016
    0xA2, 0x08, // LDX #8
    0xAD, 0x16, 0x40, // loop: LDA $4016
    0x4A, // LSR A
    0x26, 0x00, // ROL $00
    0xCA, // DEX
    0xD0, 0xF7, // BNE loop
]; // followed by RTI (added by `with_rti`)

fn with_rti(code: &[u8]) -> Vec<u8> {
    let mut code = code.to_vec();
    code.push(0x40);
    code
}

struct Rig {
    nes: Nes,
    host: LuaHost,
    /// Held while the rig's host may use LuaJIT's profiler (`limits::PROFILER`); dropped
    /// after the host.
    _profiler: Option<std::sync::MutexGuard<'static, ()>>,
    /// The host's `save_dir`, the rig's own: slot files a script persists stay here and go
    /// with the rig, and a stray file elsewhere cannot be loaded. Declared after `host`, so it
    /// is removed after the host is gone.
    save_dir: tempfile::TempDir,
}

/// The host's options with its slot files in `save_dir` (a folder the caller owns).
fn options(rom: &[u8], save_dir: &Path) -> HostOptions {
    HostOptions {
        save_dir: save_dir.to_path_buf(),
        rom_stem: "test".to_string(),
        rom: nes::Cartridge::from_ines(rom)
            .expect("valid test ROM")
            .info()
            .clone(),
        arg: None,
        palette: Palette::ntsc(),
    }
}

impl Rig {
    /// Power on (FCEUX's timeline, as scripts run) and load and start the script: its first
    /// slice runs (FCEUX 2.6.5).
    fn new(rom: &[u8], script: &str) -> Rig {
        let cart = nes::Cartridge::from_ines(rom).expect("valid test ROM");
        let mut nes = Nes::with_power_on(cart, nes::PowerOn::FCEUX);
        let save_dir = tempfile::tempdir().unwrap();
        let mut host =
            LuaHost::load_source("test.lua", script.as_bytes(), options(rom, save_dir.path()))
                .unwrap_or_else(|e| panic!("load: {e}"));
        host.start(&mut nes);
        Rig {
            nes,
            host,
            _profiler: None,
            save_dir,
        }
    }

    fn frames(&mut self, n: usize) -> Vec<String> {
        self.frames_with(n, FrameInput::default())
    }

    fn frames_with(&mut self, n: usize, input: FrameInput) -> Vec<String> {
        for _ in 0..n {
            self.host.run_frame(&mut self.nes, input);
        }
        self.host.take_output()
    }
}

// ----- write hooks ---------------------------------------------------------------------------

#[test]
fn write_hook_sees_address_size_value_and_the_stored_byte() {
    // LDA #$42; STA $10
    let rom = nrom(&[0xA9, 0x42, 0x85, 0x10], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerwrite(0x10, function(a, s, v) print(a, s, v, memory.readbyte(a)) end)",
    );
    // The hook is registered by the first slice; the store happened during start-up, so
    // power-cycle the console to run the program again under the hook.
    rig.frames(1);
    rig.nes.power_cycle();
    let out = rig.frames(2);
    assert_eq!(out, vec!["16 1 66 66"]);
}

#[test]
fn a_callback_writebyte_sticks_and_fires_no_hook() {
    // loop: LDA #$42; STA $10; JMP loop (stores every few cycles).
    let mut prg_code = vec![0xA9, 0x42, 0x85, 0x10, 0x4C, 0x00, 0x80];
    prg_code.resize(7, 0);
    let rom = nrom(&prg_code, &[]);
    let mut rig = Rig::new(
        &rom,
        "calls = 0\n\
         memory.registerwrite(0x10, function() calls = calls + 1 memory.writebyte(0x10, 0x99) end)\n\
         emu.frameadvance() -- returns before frame 1 (the first slice ran at load)\n\
         emu.frameadvance()\n\
         print(memory.readbyte(0x10), calls > 100)",
    );
    let out = rig.frames(2);
    assert_eq!(out, vec!["153 true"]);
}

#[test]
fn one_call_per_store_in_every_mode_and_per_push() {
    let once = [
        0xA2, 0x01, // LDX #1
        0xA0, 0x02, // LDY #2
        0xA9, 0x00, 0x85, 0x20, // LDA #$00; STA $20 (pointer low)
        0xA9, 0x03, 0x85, 0x21, // LDA #$03; STA $21 (pointer high: $0300)
        0xA9, 0x07, // LDA #7
        0x8D, 0x00, 0x03, // STA $0300 (abs)
        0x9D, 0x00, 0x03, // STA $0300,X -> $0301
        0x99, 0x00, 0x03, // STA $0300,Y -> $0302
        0x81, 0x1F, // STA ($1F,X) -> pointer at $20 -> $0300
        0x91, 0x20, // STA ($20),Y -> $0302
        0x95, 0x2F, // STA $2F,X -> $30
        0x85, 0x30, // STA $30
        0x8E, 0x03, 0x03, // STX $0303
        0x8C, 0x03, 0x03, // STY $0303
        0x48, // PHA -> $01FD
        0x20, 0x40, 0x80, // JSR $8040 (pushes 2 bytes)
        0x4C, 0x2B, 0x80, // JMP $802B (into the loop below)
    ];
    let mut code = once.to_vec();
    code.resize(0x2B, 0xEA);
    code.extend_from_slice(&[0x4C, 0x2B, 0x80]);
    code.resize(0x40, 0xEA);
    code.push(0x60); // $8040: RTS
    let rom = nrom(&code, &[]);
    let mut rig = Rig::new(
        &rom,
        "counts = {}\n\
         local function count(a) counts[a] = (counts[a] or 0) + 1 end\n\
         memory.registerwrite(0x0300, 4, count)\n\
         memory.registerwrite(0x30, count)\n\
         memory.registerwrite(0x01F0, 16, count)\n\
         emu.frameadvance()\n\
         emu.poweron()\n\
         emu.frameadvance()\n\
         emu.frameadvance()\n\
         print(counts[0x300], counts[0x301], counts[0x302], counts[0x303], counts[0x30], \
               counts[0x1FD], counts[0x1FC], counts[0x1FB])",
    );
    let out = rig.frames(4);
    // $0300: abs + (zp,X); $0301: abs,X; $0302: abs,Y + (zp),Y; $0303: STX + STY;
    // $30: zp,X + zp; PHA at $01FD, JSR's return address at $01FC/$01FB.
    assert_eq!(out, vec!["2 1 2 2 2 1 1 1"]);
}

#[test]
fn zero_page_inc_fires_once_with_the_final_value() {
    // LDA #5; STA $41; INC $41
    let rom = nrom(&[0xA9, 0x05, 0x85, 0x41, 0xE6, 0x41], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerwrite(0x41, function(a, s, v) print(v, memory.readbyte(0x41)) end)\n\
         emu.frameadvance() emu.poweron()",
    );
    let out = rig.frames(3);
    assert_eq!(out, vec!["5 5", "6 6"]);
}

#[test]
fn lua_writes_never_fire_hooks() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerwrite(0x10, function() print('hook') end)\n\
         memory.registerwrite(0x6000, function() print('hook') end)\n\
         memory.writebyte(0x10, 1) memory.writebyte(0x2000, 0)\n\
         emu.frameadvance()\n\
         memory.writebyte(0x10, 2)\n\
         print(memory.readbyte(0x10))",
    );
    assert_eq!(rig.frames(3), vec!["2"]);
}

#[test]
fn hooks_unregister_and_reregister_inside_a_callback() {
    // loop: STA $61; INC $41; JMP loop -- the AI's Y-pinning pattern.
    let rom = nrom(&[0x85, 0x61, 0xE6, 0x41, 0x4C, 0x00, 0x80], &[]);
    let mut rig = Rig::new(
        &rom,
        "calls = 0\n\
         local pin\n\
         function pin()\n\
           memory.registerwrite(0x61, nil) memory.registerwrite(0x41, nil)\n\
           calls = calls + 1\n\
           if memory.readbyte(0x41) ~= 7 then memory.writebyte(0x41, 7) end\n\
           memory.registerwrite(0x61, pin) memory.registerwrite(0x41, pin)\n\
         end\n\
         memory.registerwrite(0x61, pin) memory.registerwrite(0x41, pin)\n\
         emu.frameadvance() emu.frameadvance()\n\
         print(memory.readbyte(0x41), calls > 100)\n\
         memory.registerwrite(0x41, function() calls = calls + 1 memory.registerwrite(0x41, nil) end)\n\
         memory.registerwrite(0x61, nil)\n\
         calls = 0\n\
         emu.frameadvance()\n\
         print(calls)",
    );
    let out = rig.frames(3);
    assert_eq!(
        out,
        vec!["7 true", "1"],
        "a self-unregistering hook fires once"
    );
}

#[test]
fn ranges_negative_sizes_and_nil_clear() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "local f = function() end\n\
         memory.registerwrite(0x100, 3, f)\n\
         memory.registerexec(0x205, -2, f)\n\
         memory.registerread(0x300, 'sub', f)\n\
         print(pcall(function() memory.registerwrite(0x10) end))\n\
         memory.registerwrite(0x101, nil)\n\
         memory.registerexec(0x205, 1, nil)",
    );
    let out = rig.frames(1);
    assert!(out[0].starts_with("false test.lua:5:"), "{out:?}");
    let map = &rig.host.map;
    assert!(map.write.contains(0x100) && !map.write.contains(0x101) && map.write.contains(0x102));
    assert!(!map.write.contains(0x103));
    // (0x205, -2) is $0203-$0204 (FCEUX 2.6.5: addr -= |size|), so (0x205, 1, nil) removes
    // nothing; a "sub" hook is the sub-CPU's and never fires (tests/fceux/lua/memory.lua).
    assert!(map.exec.contains(0x203) && map.exec.contains(0x204) && !map.exec.contains(0x205));
    assert!(!map.read.contains(0x300));
}

// ----- exec hooks ----------------------------------------------------------------------------

#[test]
fn exec_hook_sees_pc_at_the_opcode() {
    let rom = nrom(&[0xEA, 0xEA, 0xEA], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x8001, function(a, s, v) \
           print(string.format('%04X %04X', a, memory.getregister('pc')), s, v) end)\n\
         emu.frameadvance() emu.poweron()",
    );
    assert_eq!(rig.frames(3), vec!["8001 8001 1 0"]);
}

#[test]
fn setregister_x_before_cpx_changes_the_flags() {
    // LDX #0; CPX #$1E; BNE +4; LDA #1; STA $20 -- $20 = 1 only if X was changed to $1E.
    let once = [0xA2, 0x00, 0xE0, 0x1E, 0xD0, 0x04, 0xA9, 0x01, 0x85, 0x20];
    let rom = nrom(&once, &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x8002, function() memory.setregister('x', 0x1E) end)\n\
         emu.frameadvance() emu.poweron() emu.frameadvance() print(memory.readbyte(0x20))",
    );
    assert_eq!(rig.frames(3), vec!["1"]);
}

#[test]
fn setregister_a_before_sta_changes_the_byte_stored() {
    let rom = nrom(&[0xA9, 0x11, 0x85, 0x20], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x8002, function() memory.setregister('A', 0x5A) end)\n\
         emu.frameadvance() emu.poweron() emu.frameadvance() print(memory.readbyte(0x20))",
    );
    assert_eq!(rig.frames(3), vec!["90"]);
}

#[test]
fn a_writebyte_in_an_exec_hook_is_seen_by_the_instruction() {
    // INC $A8 at $8000: the hook caps $A8 first (the AI's points multiplier).
    let rom = nrom(&[0xE6, 0xA8], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x8000, function() memory.writebyte(0xA8, 30) end)\n\
         emu.frameadvance() emu.poweron() emu.frameadvance() print(memory.readbyte(0xA8))",
    );
    assert_eq!(rig.frames(3), vec!["31"]);
}

#[test]
fn exec_hooks_fire_in_ram() {
    // Copy "INX; RTS" to $0200, JSR $0200 once.
    let once = [
        0xA9, 0xE8, 0x8D, 0x00, 0x02, // LDA #$E8 (INX); STA $0200
        0xA9, 0x60, 0x8D, 0x01, 0x02, // LDA #$60 (RTS); STA $0201
        0x20, 0x00, 0x02, // JSR $0200
    ];
    let rom = nrom(&once, &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x0200, function() print('ram', memory.getregister('x')) end)\n\
         emu.frameadvance() emu.poweron()",
    );
    assert_eq!(rig.frames(3), vec!["ram 0"]);
}

/// MMC1, 128 KiB PRG (8 banks of 16 KiB). Every bank starts with its number at $8000/$C000+0.
/// The fixed last bank at $C000 holds the program: `code` at $C010, NMI at $C100, vectors.
fn mmc1(code: &[u8]) -> Vec<u8> {
    let mut prg = vec![0xEA; 8 * 0x4000];
    for bank in 0..8 {
        prg[bank * 0x4000] = bank as u8;
    }
    let last = 7 * 0x4000;
    prg[last + 0x10..last + 0x10 + code.len()].copy_from_slice(code);
    prg[last + 0x100] = 0x40;
    prg[last + 0x3FF0] = 0x40;
    prg[last + 0x3FFA..last + 0x3FFC].copy_from_slice(&0xC100u16.to_le_bytes());
    prg[last + 0x3FFC..last + 0x3FFE].copy_from_slice(&0xC010u16.to_le_bytes());
    prg[last + 0x3FFE..last + 0x4000].copy_from_slice(&0xC100u16.to_le_bytes());
    image(1, &prg)
}

/// Five serial writes of `value` to an MMC1 register at `high`:00 (LDA #v; STA; LSR A x4...).
fn mmc1_write(high: u8, value: u8) -> Vec<u8> {
    let mut code = vec![0xA9, value];
    for i in 0..5 {
        code.extend_from_slice(&[0x8D, 0x00, high]);
        if i < 4 {
            code.push(0x4A);
        }
    }
    code
}

#[test]
fn pc_change_skips_the_following_store_and_touches_no_mapper_register() {
    // At N = $C020: LDA $CE; STA ($D1,X) with ($D1) = $DD00 (MMC1 register space); then at
    // N+4: STA $30; loop. The hook sets PC to N+2: LDA takes $D1 as its operand.
    let mut code = vec![
        0xA9, 0x00, 0x85, 0xD1, // LDA #$00; STA $D1
        0xA9, 0xDD, 0x85, 0xD2, // LDA #$DD; STA $D2
        0xA9, 0x77, 0x85, 0xCE, // LDA #$77; STA $CE
        0xA2, 0x00, // LDX #0
    ];
    code.resize(0x10, 0xEA); // N = $C020
    code.extend_from_slice(&[0xA5, 0xCE, 0x81, 0xD1]); // LDA $CE; STA ($D1,X)
    code.extend_from_slice(&[0x85, 0x30]); // N+4: STA $30
    code.extend_from_slice(&[0x4C, 0x26, 0xC0]); // JMP $C026
    let rom = mmc1(&code);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0xC020, function(a) memory.setregister('pc', a + 2) end)\n\
         memory.registerwrite(0xDD00, function() print('mapper write') end)\n\
         emu.frameadvance() emu.poweron() emu.frameadvance()\n\
         print(string.format('%02X', memory.readbyte(0x30)))",
    );
    // A = byte at $D1 ($00), stored by the instruction at N+4; no store to $DD00.
    assert_eq!(rig.frames(3), vec!["00"]);
    // Control: without the hook the STA would write the MMC1 register.
    let mut control = Rig::new(
        &rom,
        "memory.registerwrite(0xDD00, function(a, s, v) print('mapper write', v) end)\n\
         emu.frameadvance() emu.poweron() emu.frameadvance()\n\
         print(string.format('%02X', memory.readbyte(0x30)))",
    );
    assert_eq!(control.frames(3), vec!["mapper write 119", "77"]);
}

#[test]
fn reads_follow_the_bank_and_exec_hooks_survive_bank_switches() {
    // Wait until $20 is set, then switch $8000 to bank 3 (PRG mode 3) and JSR $8001 there.
    let mut code = vec![0xA5, 0x20, 0xF0, 0xFC]; // wait: LDA $20; BEQ wait
    code.extend(mmc1_write(0x80, 0x0C)); // control: PRG mode 3 ($C000 fixed)
    code.extend(mmc1_write(0xE0, 0x03)); // PRG bank 3 at $8000
    code.extend_from_slice(&[0x20, 0x01, 0x80]); // JSR $8001
    let end = 0xC010 + code.len() as u16;
    code.extend_from_slice(&[0x4C, end as u8, (end >> 8) as u8]); // JMP self
    let mut rom = mmc1(&code);
    // Bank 3: $8001 NOP, $8002 RTS.
    rom[16 + 3 * 0x4000 + 2] = 0x60;
    let mut rig = Rig::new(
        &rom,
        "print(memory.readbyte(0x8000))\n\
         memory.registerexec(0x8001, function() print('exec', memory.readbyte(0x8000)) end)\n\
         memory.writebyte(0x20, 1)\n\
         emu.frameadvance() emu.frameadvance()\n\
         print(memory.readbyte(0x8000))",
    );
    let out = rig.frames(2);
    assert_eq!(out, vec!["0", "exec 3", "3"]);
}

// ----- reads ----------------------------------------------------------------------------------

#[test]
fn readbyte_2002_keeps_vblank_and_rom_readbyte_sees_the_header() {
    let rom = nrom(&[], &[0xEA, 0x40]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x8100, function() \
           print(AND(memory.readbyte(0x2002), 0x80), AND(memory.readbyte(0x2002), 0x80)) \
           memory.registerexec(0x8100, nil) end)\n\
         local h = {} for i = 0, 15 do h[#h + 1] = rom.readbyte(i) end\n\
         print(table.concat(h, ','))\n\
         print(rom.readbyte(16) == 0xA9, rom.readbytesigned(16), rom.gethash('md5'):len())",
    );
    let out = rig.frames(3);
    assert_eq!(out[0], "78,69,83,26,2,0,1,0,0,0,0,0,0,0,0,0");
    assert_eq!(out[1], "true -87 32");
    assert_eq!(out[2], "128 128");
}

// ----- joypad ---------------------------------------------------------------------------------

#[test]
fn joypad_player_numbers_and_key_names() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "print(pcall(function() joypad.set(0, {}) end))\n\
         print(pcall(function() joypad.set(5, {}) end))\n\
         print(pcall(function() joypad.get(0) end))\n\
         emu.frameadvance()\n\
         joypad.set(1, {Start = true, A = true})\n\
         emu.frameadvance()\n\
         print(joypad.get(1).A, joypad.get(1).start)",
    );
    let out = rig.frames(2);
    assert!(out[0].starts_with("false test.lua:1: "), "{out:?}");
    assert!(out[1].starts_with("false test.lua:2: "), "{out:?}");
    assert!(out[2].starts_with("false test.lua:3: "), "{out:?}");
    assert_eq!(out[3], "true false");
}

#[test]
fn joypad_truth_table_against_user_input() {
    let rom = nrom(&[], &with_rti(&READ_PAD_NMI));
    // User holds A, B and select. Overrides: A=true, B=false, select=nil, start="x", up=1, down=0.
    let mut rig = Rig::new(
        &rom,
        "while emu.framecount() < 3 do emu.frameadvance() end -- NMIs start in frame 3\n\
         joypad.set(1, {A = true, B = false, start = 'x', up = 1, down = 0})\n\
         emu.frameadvance()\n\
         local t = joypad.get(1)\n\
         print(t.A, t.B, t.select, t.start, t.up, t.down, t.left, t.right)\n\
         print(memory.readbyte(0))\n\
         emu.frameadvance()\n\
         local d, u = joypad.getdown(1), joypad.getup(1)\n\
         print(d.A, d.B, u.B, u.A)",
    );
    let user = Buttons::A | Buttons::B | Buttons::SELECT;
    let input = FrameInput {
        user: [user, Buttons::empty()],
        movie: None,
    };
    let out = rig.frames_with(6, input);
    assert_eq!(out[0], "true false true true true true false false");
    // The game read A, select, start, up, down (bit 7 = A ... bit 0 = right): 1011 1100.
    assert_eq!(out[1], "188");
    // One-latch lifetime: the next frame sees the user's A and B again.
    assert_eq!(out[2], "true true nil nil");
}

#[test]
fn joypad_set_before_frameadvance_reaches_the_next_nmi_registerbefore_a_frame_later() {
    let rom = nrom(&[], &with_rti(&READ_PAD_NMI));
    let mut rig = Rig::new(
        &rom,
        "while emu.framecount() < 3 do emu.frameadvance() end -- NMIs start in frame 3\n\
         joypad.set(1, {start = true})\n\
         emu.frameadvance()\n\
         print('main', memory.readbyte(0))\n\
         emu.registerbefore(function() \
           if emu.framecount() == 6 then joypad.set(1, {select = true}) end end)\n\
         emu.frameadvance() print('f5', memory.readbyte(0))\n\
         emu.frameadvance() print('f6', memory.readbyte(0))\n\
         emu.frameadvance() print('f7', memory.readbyte(0))\n\
         emu.frameadvance() print('f8', memory.readbyte(0))",
    );
    let out = rig.frames(9);
    // Start (bit 3) reversed into bit 4 of $00: 0x10; select: 0x20. Set before
    // frameadvance, it reaches the next frame's NMI (frame 4); set in frame 6's
    // registerbefore, it waits for frame 7's latch.
    assert_eq!(out, vec!["main 16", "f5 0", "f6 0", "f7 32", "f8 0"]);
}

#[test]
fn movies_win_during_playback() {
    let rom = nrom(&[], &with_rti(&READ_PAD_NMI));
    let mut rig = Rig::new(
        &rom,
        "while true do joypad.set(1, {start = true}) emu.frameadvance() end",
    );
    let movie = FrameInput {
        user: [Buttons::empty(); 2],
        movie: Some(nes_movie::fm2::MovieFrame {
            command: nes_movie::fm2::Commands::empty(),
            pads: [Buttons::A, Buttons::empty()],
        }),
    };
    rig.frames(2); // the first NMI comes after the PPU warm-up
    let got = rig.host.run_frame(&mut rig.nes, movie).pads;
    assert_eq!(got[0], Buttons::A);
    assert_eq!(rig.nes.peek(0), 0x80);
    let got = rig.host.run_frame(&mut rig.nes, FrameInput::default()).pads;
    assert_eq!(
        got[0],
        Buttons::START,
        "after the movie the override applies"
    );
}

// ----- lifecycle ------------------------------------------------------------------------------

#[test]
fn the_first_slice_runs_at_start_before_the_first_frame() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "print('slice', debugger.getcyclescount(), emu.framecount())",
    );
    // FCEUX 2.6.5 runs a script's first slice as it loads it: right after power-on (its
    // reset takes no cycles), with the PPU parked where its first (inactive) frame starts.
    assert_eq!(rig.host.take_output(), ["slice 0 0"]);
    assert_eq!(rig.nes.ppu_position(), (239, 332));
    assert!(rig.frames(1).is_empty(), "the script has ended");
}

#[test]
fn the_first_frameadvance_returns_before_a_frame_runs() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "local f0 = emu.framecount()\n\
         emu.registerbefore(function() before = emu.framecount() end)\n\
         emu.registerafter(function() after = emu.framecount() end)\n\
         for k = 1, 3 do emu.frameadvance() print(emu.framecount() - f0, before, after) end",
    );
    // As FCEUX 2.6.5 logs it: the first frameadvance returns at the boundary before frame 1;
    // each later one after a frame. registerbefore and registerafter see the number of the
    // frame they are in.
    assert_eq!(rig.frames(2), vec!["0 nil nil", "1 1 1"]);
    assert_eq!(rig.frames(1), vec!["2 2 2"]);
}

#[test]
fn after_the_main_chunk_returns_hooks_and_callbacks_keep_firing() {
    for ending in ["", "coroutine.yield()"] {
        let mut nmi = READ_PAD_NMI.to_vec();
        nmi.extend_from_slice(&[0xE6, 0x10, 0x40]); // INC $10; RTI
        let rom = nrom(&[], &nmi);
        let script = format!(
            "writes = 0 befores = 0 afters = 0\n\
             memory.registerwrite(0x10, function() writes = writes + 1 end)\n\
             emu.registerbefore(function() befores = befores + 1 end)\n\
             emu.registerafter(function() afters = afters + 1 \
               if afters == 4 then print(writes > 0, befores, memory.readbyte(0)) end end)\n\
             {ending}"
        );
        let mut rig = Rig::new(&rom, &script);
        let input = FrameInput {
            user: [Buttons::START, Buttons::empty()],
            movie: None,
        };
        let out = rig.frames_with(4, input);
        assert!(!rig.host.main_alive());
        assert_eq!(out, vec!["true 4 16"], "ending {ending:?}");
    }
}

#[test]
fn frameadvance_in_a_callback_is_an_error() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "emu.registerafter(function() print(pcall(function() emu.frameadvance() end)) end)\n\
         while true do emu.frameadvance() end",
    );
    let out = rig.frames(1);
    assert_eq!(
        out,
        vec!["false test.lua:1: can't call emu.frameadvance() from here"]
    );
}

/// Once the main chunk has returned nothing waits for a frame, so FCEUX's frameadvance in a
/// callback tries the yield, which Lua 5.1 refuses (measured in FCEUX 2.6.5).
#[cfg(feature = "lua51")]
#[test]
fn frameadvance_in_a_callback_after_the_main_chunk_cannot_yield() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "emu.registerafter(function() print(pcall(emu.frameadvance)) end)\n\
         emu.frameadvance()",
    );
    let out = rig.frames(2);
    assert_eq!(
        out,
        vec![
            "false attempt to yield across metamethod/C-call boundary",
            "false can't call emu.frameadvance() from here"
        ]
    );
}

/// A frameadvance in a coroutine of the script's yields that coroutine and leaves FCEUX's
/// "waiting" flag set: the main chunk's next frameadvance raises (FCEUX 2.6.5,
/// tests/fceux/lua/coroutines.lua).
#[test]
fn frameadvance_in_a_coroutine_yields_it_and_blocks_the_next() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "emu.frameadvance()\n\
         local co = coroutine.create(function() print(select('#', emu.frameadvance())) end)\n\
         print(coroutine.resume(co))\n\
         print(coroutine.resume(co))\n\
         print(pcall(emu.frameadvance))",
    );
    let out = rig.frames(3);
    assert_eq!(
        out,
        vec![
            "true",
            "0",
            "true",
            "false can't call emu.frameadvance() from here"
        ]
    );
}

// ----- errors ---------------------------------------------------------------------------------

fn error_rig(script: &str) -> (Vec<String>, Vec<String>) {
    let rom = nrom(&[0x85, 0x10, 0x4C, 0x00, 0x80], &[]);
    let mut rig = Rig::new(&rom, script);
    let out = rig.frames(4);
    assert!(!rig.host.running(), "stopped");
    (out, rig.host.take_errors())
}

const EXIT_AND_CALLBACKS: &str = "emu.registerexit(function() print('exit') end)\n\
     emu.registerbefore(function() print('before') end)\n";

#[test]
fn an_error_in_the_main_chunk_stops_the_script() {
    let (out, errors) = error_rig(&format!("{EXIT_AND_CALLBACKS}error('boom')"));
    assert_eq!(out, vec!["exit"]);
    assert_eq!(errors, vec!["test.lua:3: boom"]);
}

#[test]
fn an_error_in_a_write_hook_stops_the_script() {
    let (out, errors) = error_rig(&format!(
        "{EXIT_AND_CALLBACKS}memory.registerwrite(0x10, function() local x = nil + 1 end)"
    ));
    // Frame 1: registerbefore, then the hook fails mid-frame: exit, and nothing after.
    assert_eq!(out, vec!["before", "exit"]);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("test.lua:3: "), "{errors:?}");
}

#[test]
fn an_error_in_an_exec_hook_stops_the_script() {
    let (out, errors) = error_rig(&format!(
        "{EXIT_AND_CALLBACKS}memory.registerexec(0x8000, function() error('exec') end)"
    ));
    assert_eq!(out, vec!["before", "exit"]);
    assert_eq!(errors, vec!["test.lua:3: exec"]);
}

#[test]
fn an_error_in_registerafter_stops_the_script() {
    let (out, errors) = error_rig(&format!(
        "{EXIT_AND_CALLBACKS}emu.registerafter(function() error('after') end)\n\
         while true do emu.frameadvance() end"
    ));
    assert_eq!(out, vec!["before", "exit"]);
    assert_eq!(errors, vec!["test.lua:3: after"]);
}

#[test]
fn a_bad_joypad_port_stops_the_script() {
    let (out, errors) = error_rig(&format!("{EXIT_AND_CALLBACKS}joypad.set(0, {{}})"));
    assert_eq!(out, vec!["exit"]);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("test.lua:3: "), "{errors:?}");
}

#[test]
fn compile_errors_name_the_file_and_line() {
    let rom = nrom(&[], &[]);
    let save_dir = tempfile::tempdir().unwrap();
    let err = LuaHost::load_source("bad.lua", b"x = 1\nif then", options(&rom, save_dir.path()))
        .unwrap_err();
    assert!(err.to_string().starts_with("bad.lua:2:"), "{err}");
}

// ----- formatting -----------------------------------------------------------------------------

#[test]
fn print_and_tostring_follow_fceux() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "print(3, 0.5, 1/3, nil, true, 'text')\n\
         print({1, 2, k = 'v'})\n\
         local t = {} t.self = t print(t)\n\
         print({['a b'] = 's'})\n\
         print({{1}, x = {y = 2}})\n\
         print(tostring(10) .. '|' .. tostring({}))\n\
         print(string.format('%02X ', 10))\n\
         print(setmetatable({}, {__tostring = function() return 'custom' end}))\n\
         print(tostring(print):match('^function:0x%x+$') ~= nil)",
    );
    assert_eq!(
        rig.frames(1),
        vec![
            "3 0.5 0.333333333333 nil true text",
            "{1, 2, k='v'}",
            "{self=table:parent}",
            // FCEUX writes a string key bare when it starts with a letter.
            "{a b='s'}",
            "{{1}, x={y=2}}",
            "10|{}",
            "0A ",
            "custom",
            "true",
        ]
    );
}

#[test]
fn user_slot_saves_and_loads_fire_the_registered_callbacks() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "savestate.registersave(function(slot) return slot * 2, 'extra' end)\n\
         savestate.registerload(function(slot, doubled, extra) print(slot, doubled, extra) end)",
    );
    rig.frames(1);
    rig.host.user_saved_slot(&mut rig.nes, 3);
    rig.host.user_loaded_slot(&mut rig.nes, 3);
    assert_eq!(rig.host.take_output(), vec!["3 6 extra"]);
}

#[test]
fn a_persisted_slot_is_written_to_the_rigs_own_folder_and_loads_back() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "local s = savestate.object(2)\n\
         savestate.save(s)\n\
         local at = emu.framecount()\n\
         savestate.persist(s)\n\
         emu.frameadvance()\n\
         emu.frameadvance()\n\
         local moved = emu.framecount() ~= at\n\
         savestate.load(savestate.object(2))\n\
         print(moved, emu.framecount() == at)",
    );
    assert_eq!(
        std::fs::read_dir(rig.save_dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect::<Vec<_>>(),
        ["test.state2"]
    );
    assert_eq!(rig.frames(3), vec!["true true"]);
    assert!(rig.host.take_errors().is_empty());
}

#[test]
fn an_error_in_a_user_slot_callback_is_reported_with_its_line() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "savestate.registersave(function(slot)\n  error('no room for ' .. slot)\nend)",
    );
    rig.frames(1);
    rig.host.user_saved_slot(&mut rig.nes, 4);
    assert_eq!(rig.host.take_errors(), vec!["test.lua:2: no room for 4"]);
    // The failing callback is dropped; a second save calls nothing.
    rig.host.user_saved_slot(&mut rig.nes, 4);
    assert!(rig.host.take_errors().is_empty());
}

// ----- pause and speed, as a window drives them ----------------------------------------------

#[test]
fn a_paused_script_waits_at_frameadvance_until_the_window_unpauses_it() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "local n = 0\n\
         while true do\n\
           n = n + 1\n\
           print(n, emu.paused())\n\
           if n == 2 then emu.pause() end\n\
           emu.frameadvance()\n\
         end",
    );
    assert_eq!(rig.frames(2), ["1 false", "2 false"]);
    assert!(rig.host.paused(), "emu.pause() is visible to the window");
    // Paused: frames the window still runs (none, normally) do not resume the main loop.
    assert!(rig.frames(3).is_empty());
    rig.host.set_paused(false);
    assert_eq!(rig.frames(1), ["3 false"]);
}

#[test]
fn speed_modes_by_fceux_name_in_any_case() {
    assert_eq!(SpeedMode::from_name("turbo"), Some(SpeedMode::Turbo));
    assert_eq!(
        SpeedMode::from_name("NoThrottle"),
        Some(SpeedMode::NoThrottle)
    );
    assert!(SpeedMode::from_name("normal").unwrap().is_throttled());
    assert!(!SpeedMode::from_name("maximum").unwrap().is_throttled());
    assert_eq!(SpeedMode::from_name("fast"), None);
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(&rom, "emu.speedmode('maximum') emu.frameadvance()");
    assert_eq!(rig.host.speed_mode(), SpeedMode::Maximum);
    rig.frames(1);
    assert_eq!(
        rig.host.speed_mode(),
        SpeedMode::Normal,
        "the main chunk ended: speed back to normal"
    );
}

#[test]
fn input_get_and_zapper_read_report_the_host_keyboard_and_mouse() {
    let rom = nrom(&[], &[]);
    let mut rig = Rig::new(
        &rom,
        "while true do\n\
           local i = input.get()\n\
           local z = zapper.read()\n\
           print(i.A, i.shift, i.B, i.xmouse, i.ymouse, i.click, z.x, z.y, z.fire)\n\
           emu.frameadvance()\n\
         end",
    );
    assert_eq!(rig.host.take_output(), ["nil nil nil 0 0 0 0 0 0"]);
    rig.host.set_host_input(HostInput {
        keys: vec!["A", "shift", "leftclick"],
        mouse_x: 100,
        mouse_y: -3,
        buttons: 1,
    });
    assert_eq!(rig.frames(1), ["true true nil 100 -3 1 100 -3 1"]);
}

// ----- rom.writebyte, hook ranges, debugger counters (FCEUX 2.6.5 parity) -------------------

#[test]
fn rom_writebyte_patches_what_the_cpu_runs() {
    // $8000: LDA #$11; STA $10. The script patches the operand before the first frame.
    let rom = nrom(&[0xA9, 0x11, 0x85, 0x10], &[]);
    let mut rig = Rig::new(
        &rom,
        "print(rom.writebyte(16 + 1, 0x22), rom.readbyte(17), memory.readbyte(0x8001))\n\
         emu.frameadvance()\n\
         emu.frameadvance()\n\
         print(memory.readbyte(0x10), rom.readbytesigned(16 + 0x7FFD), rom.readbyte(-1))\n\
         print(pcall(rom.writebyte, 15, 1))",
    );
    assert_eq!(rig.host.take_output(), ["34 34 34"]);
    assert_eq!(
        rig.frames(2),
        [
            "34 -128 0",
            "false rom.writebyte() can't edit the ROM header."
        ]
    );
}

#[test]
fn negative_hook_sizes_cover_the_bytes_below_the_address() {
    // LDA #1; STA $0F; STA $10; STA $11; STA $12.
    let rom = nrom(
        &[0xA9, 0x01, 0x85, 0x0F, 0x85, 0x10, 0x85, 0x11, 0x85, 0x12],
        &[],
    );
    let mut rig = Rig::new(
        &rom,
        "memory.registerwrite(0x12, -2, function(a) print('w', a) end)\n\
         memory.registerwrite(0x0F, 0, function(a) print('zero', a) end)",
    );
    assert_eq!(rig.frames(1), ["w 16", "w 17"]);
}

#[test]
fn a_hook_range_below_zero_silences_every_hook_of_its_kind() {
    // LDA #1; STA $00; STA $10.
    let rom = nrom(&[0xA9, 0x01, 0x85, 0x00, 0x85, 0x10], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerwrite(0x10, function(a) print('w', a) end)\n\
         memory.registerwrite(0x01, -2, function(a) print('wrapped', a) end)",
    );
    assert!(
        rig.frames(1).is_empty(),
        "key 0xFFFFFFFF empties FCEUX's hooked region"
    );
}

#[test]
fn the_debugger_counts_instructions_and_their_cycles() {
    // $8000: NOP; LDA $10 (zero page, 3 cycles); then the NMI loop.
    let rom = nrom(&[0xEA, 0xA5, 0x10], &[]);
    let mut rig = Rig::new(
        &rom,
        "memory.registerexec(0x8000, function()\n\
           debugger.resetcyclescount(); debugger.resetinstructionscount()\n\
         end)\n\
         memory.registerexec(0x8001, function()\n\
           print(debugger.getcyclescount(), debugger.getinstructionscount())\n\
         end)\n\
         emu.frameadvance()\n\
         emu.frameadvance()\n\
         print(debugger.getinstructionscount() > 1000)",
    );
    // At LDA's exec hook: the NOP's 2 cycles are past and LDA's 3 charged, as FCEUX charges
    // an opcode's base cycles at its fetch; the LDA is counted.
    assert_eq!(rig.frames(3), ["3 1", "true"]);
}
