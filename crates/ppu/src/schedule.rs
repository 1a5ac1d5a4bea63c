//! A rendering line's dot schedule, described once: what each dot 0-340 of a visible or
//! pre-render line does while rendering is enabled, as a set of primitive operations
//! (`dot_ops`, after the NESdev wiki "PPU rendering" timing diagram).
//!
//! Two paths run it, and both execute the operations with the same code (`Ppu::run_step`):
//!
//! * the per-dot path (`Ppu::rendering_dot`) runs one dot's operations;
//! * the batched path (`Ppu::run_eight_dots`) runs a whole 8-dot group (a tile, a sprite
//!   slot) from a plan folded at compile time out of the same eight table entries (`fold`):
//!   the group's shifts merged into one multi-place shift where nothing in between looks at
//!   the shifters, the dots between two fetches reported to the bus in one call, and OAM bus,
//!   OAMADDR and vertical-copy writes that change nothing dropped. Consecutive groups with
//!   equal plans share one body (`LineBatches`).
//!
//! So what a dot does is changed in one place, `dot_ops`, and both paths follow. Every plan
//! is checked at compile time (`check_plan`): the group is replayed dot by dot and as
//! planned on a model of what the operations read and write, and both must make the same
//! observations (each bus access and its dot, the shifter clocks each reload and snapshot
//! sees, the writes to v each fetch sees, the last OAM bus and OAMADDR writes).

use crate::DOTS_PER_SCANLINE;

/// A dot's operations: flag bits, and a `Fetch` in bits 16-18.
pub(crate) type Ops = u32;

/// The background shifters clock once.
pub(crate) const SHIFT: Ops = 1 << 0;
/// The fetched tile moves from the latches into the low half of the shifters.
pub(crate) const RELOAD: Ops = 1 << 1;
/// Visible lines: pixel output starts at x = 0.
pub(crate) const LINE_START: Ops = 1 << 2;
/// Visible lines: the pixels before this dot's are output from the last snapshot (pixels
/// are produced lazily, eight at a time, from a copy of the shifters).
pub(crate) const PIXELS: Ops = 1 << 3;
/// Visible lines: the shifters are recorded for the next eight pixels.
pub(crate) const SNAPSHOT: Ops = 1 << 4;
/// Visible lines: the line's last pixels are output.
pub(crate) const LAST_PIXELS: Ops = 1 << 5;
/// Visible lines: sprite evaluation (run lazily) is completed. It reads and writes OAMADDR
/// and the OAM bus.
pub(crate) const FINISH_EVALUATION: Ops = 1 << 6;
/// The sprite units end the line and the sprite line buffer is emptied for the next line.
pub(crate) const SPRITE_LINE_END: Ops = 1 << 7;
/// OAMADDR is held at 0.
pub(crate) const OAM_ADDR_ZERO: Ops = 1 << 8;
/// The OAM bus shows this sprite-fetch dot's byte of secondary OAM.
pub(crate) const OAM_BUS_SLOT: Ops = 1 << 9;
/// The OAM bus shows secondary OAM byte 0.
pub(crate) const OAM_BUS_FIRST: Ops = 1 << 10;
/// The sprite units' counters start counting.
pub(crate) const START_SPRITE_COUNTERS: Ops = 1 << 11;
/// hori(v) = hori(t).
pub(crate) const COPY_HORIZONTAL: Ops = 1 << 12;
/// Pre-render line: vert(v) = vert(t).
pub(crate) const COPY_VERTICAL: Ops = 1 << 13;
/// Coarse X increment of v.
pub(crate) const INCREMENT_X: Ops = 1 << 14;
/// Y increment of v.
pub(crate) const INCREMENT_Y: Ops = 1 << 15;

const FETCH_SHIFT: u32 = 16;
const FETCH_MASK: Ops = 7 << FETCH_SHIFT;

/// Operations only a visible line has: the pre-render line outputs no pixels and evaluates
/// no sprites.
const VISIBLE_ONLY: Ops = LINE_START | PIXELS | SNAPSHOT | LAST_PIXELS | FINISH_EVALUATION;
/// Operations only the pre-render line has.
const PRE_RENDER_ONLY: Ops = COPY_VERTICAL;
/// Any write to the OAM bus latch.
const OAM_BUS_WRITES: Ops = OAM_BUS_SLOT | OAM_BUS_FIRST;
/// Operations that look at (or replace) the shifters' cells, so every earlier clock must have
/// happened: pixel output itself reads the snapshot, not the shifters.
const READS_SHIFTERS: Ops = RELOAD | SNAPSHOT;

/// The PPU bus access a dot starts (each takes two dots: the address, then the read; the
/// read is made on the first).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Fetch {
    None,
    /// Background nametable byte, into its latch.
    Nametable,
    /// Background attribute byte, into its latch.
    Attribute,
    /// Background pattern low byte, into its latch.
    PatternLow,
    /// Background pattern high byte, into its latch.
    PatternHigh,
    /// A nametable read whose byte is not used (the sprite slots' two, the line's last two).
    UnusedNametable,
    /// A sprite slot's pattern low byte.
    SpritePatternLow,
    /// A sprite slot's pattern high byte, which loads the slot's sprite unit.
    SpritePatternHigh,
}

const fn fetch(fetch: Fetch) -> Ops {
    (fetch as Ops) << FETCH_SHIFT
}

/// The fetch among `ops`.
#[inline(always)]
pub(crate) const fn fetch_of(ops: Ops) -> Fetch {
    match (ops & FETCH_MASK) >> FETCH_SHIFT {
        1 => Fetch::Nametable,
        2 => Fetch::Attribute,
        3 => Fetch::PatternLow,
        4 => Fetch::PatternHigh,
        5 => Fetch::UnusedNametable,
        6 => Fetch::SpritePatternLow,
        7 => Fetch::SpritePatternHigh,
        _ => Fetch::None,
    }
}

/// What dot `dot` (0-340) of a rendering line does, both line kinds' operations together
/// (`for_line` keeps one kind's). Rule by rule from the NESdev wiki "PPU rendering" timing
/// diagram.
pub(crate) const fn dot_ops(dot: u16) -> Ops {
    // A tile's four fetches start on the odd dots of its 8-dot group (1, 3, 5, 7).
    let phase = dot & 7;
    let mut ops = 0;
    // Background tile fetches: dots 1-256 fetch this line's 32 tiles (and the start of a
    // 33rd), dots 321-336 the next line's first two; coarse X increments after each tile's
    // last fetch.
    if matches!(dot, 1..=256 | 321..=336) {
        ops |= match phase {
            1 => fetch(Fetch::Nametable),
            3 => fetch(Fetch::Attribute),
            5 => fetch(Fetch::PatternLow),
            7 => fetch(Fetch::PatternHigh),
            0 => INCREMENT_X,
            _ => 0,
        };
    }
    // Dot 256 increments Y (after coarse X); dot 257 copies the horizontal bits of t to v.
    if dot == 256 {
        ops |= INCREMENT_Y;
    }
    if dot == 257 {
        ops |= COPY_HORIZONTAL;
    }
    // The pre-render line copies the vertical bits of t to v on each of dots 280-304.
    if matches!(dot, 280..=304) {
        ops |= COPY_VERTICAL;
    }
    // The shifters clock on dots 2-257 and 322-337, and the latched tile is reloaded into
    // them on dots 9, 17, ..., 257 and 329, 337. Dot 257's clock and reload only show when
    // rendering is then switched off: the stale tile stays in the shifters (AccuracyCoin
    // "Stale BG Shift Registers").
    if matches!(dot, 2..=257 | 322..=337) {
        ops |= SHIFT;
        if phase == 1 {
            ops |= RELOAD;
        }
    }
    // Pixels (visible lines), produced from a snapshot of the shifters taken on dot 1 and on
    // each reload dot up to 249, output when the next snapshot is taken; dot 256 outputs the
    // last eight and completes sprite evaluation (run lazily, as nothing observed it).
    if dot == 1 {
        ops |= LINE_START | SNAPSHOT;
    }
    if phase == 1 && matches!(dot, 9..=249) {
        ops |= PIXELS | SNAPSHOT;
    }
    if dot == 256 {
        ops |= LAST_PIXELS | FINISH_EVALUATION;
    }
    // Sprite fetches, dots 257-320: eight 8-dot slots, each with two unused nametable reads
    // (on the group's dots 0 and 2) and the sprite's pattern bytes (4 and 6), while the OAM
    // bus shows the slot's four secondary OAM bytes (dots 0-3 of the group) and OAMADDR is
    // held at 0. Dot 257 first ends the line for the sprite units.
    if matches!(dot, 257..=320) {
        ops |= OAM_ADDR_ZERO;
        ops |= match (dot - 257) & 7 {
            0 | 2 => OAM_BUS_SLOT | fetch(Fetch::UnusedNametable),
            1 | 3 => OAM_BUS_SLOT,
            4 => fetch(Fetch::SpritePatternLow),
            6 => fetch(Fetch::SpritePatternHigh),
            _ => 0,
        };
    }
    if dot == 257 {
        ops |= SPRITE_LINE_END;
    }
    // Dots 337 and 339: two unused nametable reads (MMC5 counts them to detect scanlines).
    if dot == 337 || dot == 339 {
        ops |= fetch(Fetch::UnusedNametable);
    }
    // Dot 339 starts the sprite units' counters for the next line.
    if dot == 339 {
        ops |= START_SPRITE_COUNTERS;
    }
    // From dot 321 through the next line's dot 0 the OAM bus shows secondary OAM byte 0.
    if dot >= 321 || dot == 0 {
        ops |= OAM_BUS_FIRST;
    }
    ops
}

/// The fetch each dot starts (`[0]`) and the one in progress on it (`[1]`: started on it or
/// on the dot before; none on dot 0, which idles), for register effects that land mid-fetch.
const FETCHES: [[Fetch; DOTS_PER_SCANLINE as usize]; 2] = {
    let mut fetches = [[Fetch::None; DOTS_PER_SCANLINE as usize]; 2];
    let mut dot = 0;
    while dot < DOTS_PER_SCANLINE as usize {
        let started = fetch_of(dot_ops(dot as u16));
        fetches[0][dot] = started;
        fetches[1][dot] = if matches!(started, Fetch::None) && dot > 0 {
            fetches[0][dot - 1]
        } else {
            started
        };
        dot += 1;
    }
    fetches
};

/// The fetch dot `dot` of a rendering line starts (on its first dot, the address latch
/// strobe).
pub(crate) fn fetch_started_on(dot: u16) -> Fetch {
    FETCHES[0]
        .get(usize::from(dot))
        .copied()
        .unwrap_or(Fetch::None)
}

/// The fetch whose two dots include dot `dot` of a rendering line.
pub(crate) fn fetch_in_progress(dot: u16) -> Fetch {
    FETCHES[1]
        .get(usize::from(dot))
        .copied()
        .unwrap_or(Fetch::None)
}

/// `ops` as a visible (`visible`) or the pre-render line runs them.
pub(crate) const fn for_line(ops: Ops, visible: bool) -> Ops {
    if visible {
        ops & !PRE_RENDER_ONLY
    } else {
        ops & !VISIBLE_ONLY
    }
}

/// Whether dot `dot` of the `visible` or pre-render line has work outside the table (and
/// so is not batched): the pre-render line clears the status flags on dot 1 and samples
/// rendering for the odd-frame skip on `ODD_FRAME_SKIP_SAMPLE_DOT` (`Ppu::pre_render_dot`).
const fn has_work_outside_table(dot: u16, visible: bool) -> bool {
    !visible && (dot == 1 || dot == crate::render::ODD_FRAME_SKIP_SAMPLE_DOT)
}

/// One dot's part of a run: its operations (`SHIFT` left out), the shifter clocks to run
/// first (this dot's and any deferred from earlier dots of a batch) and the dots to report
/// to the bus around its fetch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Step {
    pub ops: Ops,
    pub shifts: u8,
    pub dots_before_fetch: u8,
    pub dots_after_fetch: u8,
}

impl Step {
    const EMPTY: Step = Step {
        ops: 0,
        shifts: 0,
        dots_before_fetch: 0,
        dots_after_fetch: 0,
    };

    /// One dot run on its own: everything the table says, the bus told of the dot afterwards
    /// (by `Ppu::tick`).
    pub(crate) const fn single(ops: Ops, visible: bool) -> Step {
        let ops = for_line(ops, visible);
        Step {
            ops: ops & !SHIFT,
            shifts: (ops & SHIFT != 0) as u8,
            dots_before_fetch: 0,
            dots_after_fetch: 0,
        }
    }

    const fn same(&self, other: &Step) -> bool {
        self.ops == other.ops
            && self.shifts == other.shifts
            && self.dots_before_fetch == other.dots_before_fetch
            && self.dots_after_fetch == other.dots_after_fetch
    }
}

/// Dots in a batch.
pub(crate) const GROUP_DOTS: usize = 8;

/// A batch's steps, one per dot.
pub(crate) type Plan = [Step; GROUP_DOTS];

/// The operations of dots `first..first + 8` of a `visible` or pre-render line.
const fn group_ops(first: u16, visible: bool) -> [Ops; GROUP_DOTS] {
    let mut ops = [0; GROUP_DOTS];
    let mut k = 0;
    while k < GROUP_DOTS {
        ops[k] = for_line(dot_ops(first + k as u16), visible);
        k += 1;
    }
    ops
}

/// Folds eight dots' operations into one batch: the same operations in the same order,
/// except that
/// * shifter clocks are deferred to the next operation that looks at the shifters, or the
///   group's last dot, and run there in one multi-place shift (the fetches, pixel output
///   and v updates in between do not touch the shifters);
/// * the bus is told of the dots before a fetch and up to the next one (or the group's end)
///   in one call each, so each access still happens on its dot's clock;
/// * an OAM bus write that a later one overwrites before anything reads the bus (only sprite
///   evaluation does; CPU reads of `$2004` end a batch first) is dropped, and so are an
///   OAMADDR clear and a vertical copy that repeat one with no change in between.
const fn fold(ops: &[Ops; GROUP_DOTS]) -> Plan {
    let mut plan = [Step::EMPTY; GROUP_DOTS];
    let mut pending_shifts = 0;
    let mut oam_addr_cleared = false;
    let mut vertical_copied = false;
    // The dots the bus has been told of.
    let mut reported = 0;
    let mut k = 0;
    while k < GROUP_DOTS {
        let mut step_ops = ops[k] & !SHIFT;
        let mut step = Step::EMPTY;
        if ops[k] & SHIFT != 0 {
            pending_shifts += 1;
        }
        if step_ops & READS_SHIFTERS != 0 || k == GROUP_DOTS - 1 {
            step.shifts = pending_shifts;
            pending_shifts = 0;
        }
        if step_ops & FINISH_EVALUATION != 0 {
            oam_addr_cleared = false;
        }
        if step_ops & OAM_ADDR_ZERO != 0 {
            if oam_addr_cleared {
                step_ops &= !OAM_ADDR_ZERO;
            }
            oam_addr_cleared = true;
        }
        if step_ops & OAM_BUS_WRITES != 0 && oam_bus_overwritten_after(ops, k) {
            step_ops &= !OAM_BUS_WRITES;
        }
        if !matches!(fetch_of(step_ops), Fetch::None) {
            let next = next_fetch_after(ops, k);
            step.dots_before_fetch = k as u8 - reported;
            step.dots_after_fetch = next - k as u8;
            reported = next;
        } else if k == GROUP_DOTS - 1 && reported == 0 {
            // No fetch at all: the bus hears of the whole group at its end.
            step.dots_after_fetch = GROUP_DOTS as u8;
        }
        if step_ops & COPY_HORIZONTAL != 0 {
            vertical_copied = false;
        }
        if step_ops & COPY_VERTICAL != 0 {
            if vertical_copied {
                step_ops &= !COPY_VERTICAL;
            }
            vertical_copied = true;
        }
        if step_ops & (INCREMENT_X | INCREMENT_Y) != 0 {
            vertical_copied = false;
        }
        step.ops = step_ops;
        plan[k] = step;
        k += 1;
    }
    plan
}

/// Whether a dot after `k` writes the OAM bus before sprite evaluation reads it.
const fn oam_bus_overwritten_after(ops: &[Ops; GROUP_DOTS], k: usize) -> bool {
    let mut later = k + 1;
    while later < GROUP_DOTS {
        // Evaluation comes before a dot's own OAM bus write (see `Ppu::run_step`).
        if ops[later] & FINISH_EVALUATION != 0 {
            return false;
        }
        if ops[later] & OAM_BUS_WRITES != 0 {
            return true;
        }
        later += 1;
    }
    false
}

/// The group dot of the next fetch after dot `k`, or the group's length.
const fn next_fetch_after(ops: &[Ops; GROUP_DOTS], k: usize) -> u8 {
    let mut later = k + 1;
    while later < GROUP_DOTS {
        if !matches!(fetch_of(ops[later]), Fetch::None) {
            return later as u8;
        }
        later += 1;
    }
    GROUP_DOTS as u8
}

/// What a run of steps lets the rest of the PPU and the bus observe, in order, on a model of
/// the state the operations read and write (in `Ppu::run_step`'s order): each event is one
/// `u32`, its kind in the top byte.
struct Trace {
    events: [u32; 64],
    len: usize,
}

impl Trace {
    const fn push(&mut self, kind: u32, value: u32) {
        assert!(self.len < self.events.len(), "trace too long");
        self.events[self.len] = kind << 24 | value;
        self.len += 1;
    }

    const fn same(&self, other: &Trace) -> bool {
        if self.len != other.len {
            return false;
        }
        let mut i = 0;
        while i < self.len {
            if self.events[i] != other.events[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// Replays `steps` (dot `k` of the group runs `steps[k]`; `per_dot`: `Ppu::tick` reports
/// each dot to the bus after it) and records what can be observed: each bus access with its
/// dot and the writes to v before it, each reload and snapshot with the shifter clocks
/// before it, pixel output and evaluation with what they read, and at the end the clocks,
/// dots, last OAM bus write and whether OAMADDR is held at 0.
const fn simulate(steps: &Plan, per_dot: bool) -> Trace {
    let mut trace = Trace {
        events: [0; 64],
        len: 0,
    };
    let mut dots = 0u32;
    let mut shifts = 0u32;
    // Writes to v so far, a vertical copy repeated with no other write between counted once
    // (t does not change during a batch).
    let mut v_writes = 0u32;
    let mut last_v_write = 0;
    // The last OAM bus writer (an operation bit, and the dot for a slot byte) and whether
    // OAMADDR was cleared since evaluation last moved it.
    let mut oam_bus = 0u32;
    let mut oam_addr_cleared = false;
    let mut k = 0;
    while k < GROUP_DOTS {
        let step = &steps[k];
        let ops = step.ops;
        let dot = k as u32;
        shifts += step.shifts as u32;
        if ops & RELOAD != 0 {
            trace.push(1, shifts);
        }
        if ops & LINE_START != 0 {
            trace.push(2, dot);
        }
        if ops & PIXELS != 0 {
            trace.push(3, dot);
        }
        if ops & SNAPSHOT != 0 {
            trace.push(4, shifts << 8 | dot);
        }
        if ops & LAST_PIXELS != 0 {
            trace.push(5, dot);
        }
        if ops & FINISH_EVALUATION != 0 {
            trace.push(6, oam_bus << 1 | oam_addr_cleared as u32);
            oam_bus = FINISH_EVALUATION;
            oam_addr_cleared = false;
        }
        if ops & SPRITE_LINE_END != 0 {
            trace.push(7, dot);
        }
        if ops & OAM_ADDR_ZERO != 0 {
            oam_addr_cleared = true;
        }
        if ops & OAM_BUS_SLOT != 0 {
            oam_bus = OAM_BUS_SLOT << 8 | dot;
        }
        if ops & OAM_BUS_FIRST != 0 {
            oam_bus = OAM_BUS_FIRST;
        }
        if ops & START_SPRITE_COUNTERS != 0 {
            trace.push(8, dot);
        }
        dots += step.dots_before_fetch as u32;
        let fetch = fetch_of(ops);
        if !matches!(fetch, Fetch::None) {
            trace.push(9, (fetch as u32) << 16 | v_writes << 8 | dots);
        }
        dots += step.dots_after_fetch as u32;
        let mut bit = COPY_HORIZONTAL;
        while bit <= INCREMENT_Y {
            if ops & bit != 0 && !(bit == COPY_VERTICAL && last_v_write == COPY_VERTICAL) {
                v_writes += 1;
                last_v_write = bit;
                trace.push(10, bit);
            }
            bit <<= 1;
        }
        if per_dot {
            dots += 1;
        }
        k += 1;
    }
    trace.push(11, shifts);
    trace.push(12, dots);
    trace.push(13, oam_bus);
    trace.push(14, oam_addr_cleared as u32);
    trace
}

/// Whether `plan` does what dots `ops` do one at a time, as far as anything can observe.
const fn check_plan(ops: &[Ops; GROUP_DOTS], plan: &Plan, visible: bool) -> bool {
    let mut one_by_one = [Step::EMPTY; GROUP_DOTS];
    let mut k = 0;
    while k < GROUP_DOTS {
        one_by_one[k] = Step::single(ops[k], visible);
        k += 1;
    }
    simulate(&one_by_one, true).same(&simulate(plan, false))
}

/// Runs of a line kind, at most.
pub(crate) const MAX_RUNS: usize = 12;
/// 8-dot groups starting at dots 1, 9, ..., 329 (the next would run past the line's end).
const GROUPS: usize = (DOTS_PER_SCANLINE as usize - 1) / GROUP_DOTS;

/// Consecutive groups with the same batch plan: `run_eight_dots` tests a dot against each
/// run's range and runs its plan, one body per run.
#[derive(Clone, Copy)]
pub(crate) struct Run {
    /// First dots of the first and the last group.
    pub first: u16,
    pub last: u16,
    pub steps: Plan,
}

impl Run {
    /// Groups in the run.
    const fn groups(&self) -> u16 {
        (self.last - self.first) / GROUP_DOTS as u16 + 1
    }
}

/// The batches of one line kind (visible or pre-render), longest run first (tested first).
pub(crate) struct LineBatches {
    pub runs: [Run; MAX_RUNS],
    pub run_count: usize,
}

const fn line_batches(visible: bool) -> LineBatches {
    let mut batches = LineBatches {
        runs: [Run {
            first: 0,
            last: 0,
            steps: [Step::EMPTY; GROUP_DOTS],
        }; MAX_RUNS],
        run_count: 0,
    };
    let mut group = 0;
    while group < GROUPS {
        let first = (group * GROUP_DOTS + 1) as u16;
        let mut batchable = true;
        let mut dot = first;
        while dot < first + GROUP_DOTS as u16 {
            batchable &= !has_work_outside_table(dot, visible);
            dot += 1;
        }
        if batchable {
            let ops = group_ops(first, visible);
            let steps = fold(&ops);
            assert!(
                check_plan(&ops, &steps, visible),
                "a batch does not do what its dots do one at a time"
            );
            let count = batches.run_count;
            if count > 0
                && batches.runs[count - 1].last + GROUP_DOTS as u16 == first
                && same_plan(&batches.runs[count - 1].steps, &steps)
            {
                batches.runs[count - 1].last = first;
            } else {
                assert!(
                    count < MAX_RUNS,
                    "more batch runs than `Ppu::run_group` tests: raise MAX_RUNS"
                );
                batches.runs[count] = Run {
                    first,
                    last: first,
                    steps,
                };
                batches.run_count += 1;
            }
        }
        group += 1;
    }
    // Longest first (a stable insertion sort).
    let mut sorted = 1;
    while sorted < batches.run_count {
        let mut at = sorted;
        while at > 0 && batches.runs[at - 1].groups() < batches.runs[at].groups() {
            let run = batches.runs[at];
            batches.runs[at] = batches.runs[at - 1];
            batches.runs[at - 1] = run;
            at -= 1;
        }
        sorted += 1;
    }
    batches
}

const fn same_plan(a: &Plan, b: &Plan) -> bool {
    let mut k = 0;
    while k < GROUP_DOTS {
        if !a[k].same(&b[k]) {
            return false;
        }
        k += 1;
    }
    true
}

/// The batches of the pre-render line (`[0]`) and the visible lines (`[1]`).
pub(crate) const BATCHES: [LineBatches; 2] = [line_batches(false), line_batches(true)];

/// Dots from a line's dot 1 to the end of its last whole group (dots 329-336).
pub(crate) const LINE_GROUP_DOTS: u32 = (GROUPS * GROUP_DOTS) as u32;

/// The visible line's runs in dot order (indexes into `BATCHES[1].runs`, the first
/// `run_count` of them): every group from dot 1 to dot 336 is batched (checked below), so a
/// whole line's groups can run back to back (`Ppu::run_visible_line_groups`).
pub(crate) const VISIBLE_LINE_ORDER: [usize; MAX_RUNS] = {
    let batches = &BATCHES[1];
    let mut order = [0; MAX_RUNS];
    let mut index = 0;
    while index < batches.run_count {
        order[index] = index;
        index += 1;
    }
    // Selection sort by first dot.
    let mut sorted = 0;
    while sorted < batches.run_count {
        let mut earliest = sorted;
        let mut at = sorted + 1;
        while at < batches.run_count {
            if batches.runs[order[at]].first < batches.runs[order[earliest]].first {
                earliest = at;
            }
            at += 1;
        }
        let run = order[sorted];
        order[sorted] = order[earliest];
        order[earliest] = run;
        sorted += 1;
    }
    // The runs in that order must tile dots 1-336 exactly.
    let mut next = 1u16;
    let mut position = 0;
    while position < batches.run_count {
        let run = &batches.runs[order[position]];
        assert!(
            run.first == next,
            "a visible line's groups are not all batched: no whole-line path"
        );
        next = run.last + GROUP_DOTS as u16;
        position += 1;
    }
    assert!(next as u32 == LINE_GROUP_DOTS + 1);
    order
};

/// The plan of a visible line's ordinary background tile group: a one-place shift, the
/// reload, the last group's pixels and a new snapshot, then the four fetches two dots apart,
/// and the remaining seven shifts with the coarse X increment. `Ppu::run_tile_groups` runs a
/// run of such groups in two passes (every fetch first, then every pixel), which is only
/// right for exactly this plan: `TILE_RUN` below insists a run has it.
pub(crate) const TILE_PLAN: Plan = {
    const fn fetch_step(ops: Ops, shifts: u8) -> Step {
        Step {
            ops,
            shifts,
            dots_before_fetch: 0,
            dots_after_fetch: 2,
        }
    }
    [
        fetch_step(RELOAD | PIXELS | SNAPSHOT | fetch(Fetch::Nametable), 1),
        Step::EMPTY,
        fetch_step(fetch(Fetch::Attribute), 0),
        Step::EMPTY,
        fetch_step(fetch(Fetch::PatternLow), 0),
        Step::EMPTY,
        fetch_step(fetch(Fetch::PatternHigh), 0),
        Step {
            ops: INCREMENT_X,
            shifts: 7,
            dots_before_fetch: 0,
            dots_after_fetch: 0,
        },
    ]
};

/// The visible line's run (index into `BATCHES[1].runs`) of `TILE_PLAN` groups: the bulk of
/// the line, dots 9-248.
pub(crate) const TILE_RUN: usize = {
    let batches = &BATCHES[1];
    let mut found = None;
    let mut run = 0;
    while run < batches.run_count {
        if same_plan(&batches.runs[run].steps, &TILE_PLAN) {
            assert!(found.is_none(), "two runs with the tile plan");
            found = Some(run);
        }
        run += 1;
    }
    let Some(run) = found else {
        panic!("no visible-line run has the tile plan");
    };
    assert!(batches.runs[run].first == 9 && batches.runs[run].last == 241);
    run
};

/// Distinct dot operation sets in the table, at most.
pub(crate) const MAX_ACTIONS: usize = 40;

/// The table as the per-dot path dispatches it: each dot's index into the distinct operation
/// sets.
pub(crate) struct Actions {
    pub of_dot: [u8; DOTS_PER_SCANLINE as usize],
    pub ops: [Ops; MAX_ACTIONS],
}

const fn actions() -> Actions {
    let mut actions = Actions {
        of_dot: [0; DOTS_PER_SCANLINE as usize],
        ops: [0; MAX_ACTIONS],
    };
    let mut count = 0;
    let mut dot = 0;
    while dot < DOTS_PER_SCANLINE {
        let ops = dot_ops(dot);
        let mut action = 0;
        while action < count && actions.ops[action] != ops {
            action += 1;
        }
        if action == count {
            assert!(
                count < MAX_ACTIONS,
                "more dot kinds than `Ppu::rendering_dot` dispatches: raise MAX_ACTIONS"
            );
            actions.ops[action] = ops;
            count += 1;
        }
        actions.of_dot[dot as usize] = action as u8;
        dot += 1;
    }
    actions
}

pub(crate) const ACTIONS: Actions = actions();

/// The run of `visible` or pre-render line batches that contains the group starting at
/// `first`.
const fn run_of(first: u16, visible: bool) -> Option<&'static Run> {
    let batches = &BATCHES[visible as usize];
    let mut run = 0;
    while run < batches.run_count {
        let candidate = &batches.runs[run];
        if candidate.first <= first && first <= candidate.last {
            return Some(candidate);
        }
        run += 1;
    }
    None
}

// Every regular group but the pre-render line's first is batched, as the speed of a frame
// relies on it.
const _: () = {
    let mut group = 0;
    while group < GROUPS {
        let first = (group * GROUP_DOTS + 1) as u16;
        assert!(run_of(first, true).is_some());
        assert!(group == 0 || run_of(first, false).is_some());
        group += 1;
    }
};

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_at(first: u16, visible: bool) -> Plan {
        run_of(first, visible).unwrap().steps
    }

    #[test]
    fn a_background_tile_is_one_reload_four_timed_fetches_and_a_seven_place_shift() {
        let plan = plan_at(17, true);
        let shifts: Vec<u8> = plan.iter().map(|step| step.shifts).collect();
        assert_eq!(shifts, [1, 0, 0, 0, 0, 0, 0, 7]);
        let fetches: Vec<Fetch> = plan.iter().map(|step| fetch_of(step.ops)).collect();
        use Fetch::*;
        assert_eq!(
            fetches,
            [
                Nametable,
                None,
                Attribute,
                None,
                PatternLow,
                None,
                PatternHigh,
                None
            ]
        );
        let reports: Vec<(u8, u8)> = plan
            .iter()
            .map(|step| (step.dots_before_fetch, step.dots_after_fetch))
            .collect();
        assert_eq!(
            reports,
            [
                (0, 2),
                (0, 0),
                (0, 2),
                (0, 0),
                (0, 2),
                (0, 0),
                (0, 2),
                (0, 0)
            ]
        );
        assert_eq!(
            plan[0].ops & (RELOAD | PIXELS | SNAPSHOT),
            RELOAD | PIXELS | SNAPSHOT
        );
        assert_eq!(plan[7].ops & INCREMENT_X, INCREMENT_X);
        assert_eq!(for_line(plan_at(17, false)[0].ops, false) & PIXELS, 0);
    }

    #[test]
    fn a_sprite_slot_keeps_only_its_last_oam_bus_byte_and_one_oamaddr_clear() {
        let plan = plan_at(265, true);
        let bus_writes: Vec<usize> = (0..GROUP_DOTS)
            .filter(|&k| plan[k].ops & OAM_BUS_WRITES != 0)
            .collect();
        assert_eq!(bus_writes, [3]);
        let clears = plan.iter().filter(|s| s.ops & OAM_ADDR_ZERO != 0).count();
        assert_eq!(clears, 1);
        // The pre-render line's vertical copies (dots 280-304) shrink to one per group,
        // made on the first dot that has it, before the v-reading fetch after it.
        let copies = |first: u16| -> Vec<usize> {
            let plan = plan_at(first, false);
            (0..GROUP_DOTS)
                .filter(|&k| plan[k].ops & COPY_VERTICAL != 0)
                .collect()
        };
        assert_eq!(copies(273), [7]);
        assert_eq!(copies(281), [0]);
        assert_eq!(copies(305), [] as [usize; 0]);
    }

    #[test]
    fn consecutive_groups_with_the_same_plan_share_one_batch() {
        let runs = |visible: bool| {
            let batches = &BATCHES[usize::from(visible)];
            batches.runs[..batches.run_count]
                .iter()
                .map(|run| (run.first, run.last))
                .collect::<Vec<_>>()
        };
        // First tile, tiles, last tile, first sprite slot, sprite slots, two prefetch tiles.
        assert_eq!(
            runs(true),
            [
                (9, 241),
                (265, 313),
                (1, 1),
                (249, 249),
                (257, 257),
                (321, 321),
                (329, 329)
            ]
        );
        // No first tile (the pre-render line's dot 1 runs alone), and sprite slots without
        // vertical copies, with one on the last dot (273-280), with them on all.
        assert_eq!(
            runs(false),
            [
                (9, 241),
                (281, 297),
                (305, 313),
                (249, 249),
                (257, 257),
                (265, 265),
                (273, 273),
                (321, 321),
                (329, 329)
            ]
        );
    }

    #[test]
    fn the_check_rejects_plans_that_differ_from_the_dots() {
        let ops = group_ops(17, true);
        let good = fold(&ops);
        assert!(check_plan(&ops, &good, true));
        // A shift moved past the reload.
        let mut bad = good;
        bad[0].shifts = 0;
        bad[7].shifts = 8;
        assert!(!check_plan(&ops, &bad, true));
        // A fetch reported on the wrong dot.
        let mut bad = good;
        bad[0].dots_after_fetch = 1;
        bad[7].dots_after_fetch = 1;
        assert!(!check_plan(&ops, &bad, true));
        // A fetch left out.
        let mut bad = good;
        bad[2].ops &= !FETCH_MASK;
        assert!(!check_plan(&ops, &bad, true));
        // The pre-render copies made once at the end of the group, after the second unused
        // nametable fetch, which must see v copied on the dots before it.
        let ops = group_ops(281, false);
        let mut bad = fold(&ops);
        bad[0].ops &= !COPY_VERTICAL;
        bad[7].ops |= COPY_VERTICAL;
        assert!(!check_plan(&ops, &bad, false));
        // The sprite slot's OAM bus left on its first byte.
        let ops = group_ops(265, true);
        let mut bad = fold(&ops);
        bad[3].ops &= !OAM_BUS_SLOT;
        bad[0].ops |= OAM_BUS_SLOT;
        assert!(!check_plan(&ops, &bad, true));
    }

    #[test]
    fn the_fetch_in_progress_follows_the_two_dot_fetches() {
        use Fetch::*;
        let expected = |dot: u16| match dot {
            1..=256 | 321..=336 => {
                [Nametable, Attribute, PatternLow, PatternHigh][usize::from((dot - 1) >> 1) & 3]
            }
            257..=320 => [
                UnusedNametable,
                UnusedNametable,
                SpritePatternLow,
                SpritePatternHigh,
            ][usize::from((dot - 257) >> 1) & 3],
            0 => None,
            _ => UnusedNametable,
        };
        for dot in 0..DOTS_PER_SCANLINE {
            assert_eq!(fetch_in_progress(dot), expected(dot), "dot {dot}");
        }
    }
}
