//! A recording bus for the unit tests: flat 64 KiB of RAM, a log of every cycle's access,
//! interrupt lines scripted per cycle, and scripted DMA requests.
//!
//! Schedules are ranges over the number of accesses logged so far. The CPU reads the lines
//! right after each access, so `irq_asserted = vec![3..5]` means the IRQ line is seen
//! asserted at the end of the 3rd and 4th cycles (log indices 2 and 3).

use std::ops::Range;

use crate::bus::Bus;
use crate::cpu::{Cpu, Status};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read(u16, u8),
    Write(u16, u8),
}

/// A DMC fetch request: visible from `from` accesses on, withdrawn at `withdraw_at`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DmcRequest {
    pub from: usize,
    pub address: u16,
    pub withdraw_at: Option<usize>,
}

#[derive(Debug)]
pub(crate) struct TestBus {
    pub memory: Vec<u8>,
    pub log: Vec<Access>,
    pub nmi_asserted: Vec<Range<usize>>,
    pub irq_asserted: Vec<Range<usize>>,
    /// Set by a write to $4014, like the console's OAM DMA request.
    pub oam_page: Option<u8>,
    pub oam_started_at: Vec<usize>,
    pub dmc_requests: Vec<DmcRequest>,
    /// (number of accesses when the byte was handed over, byte).
    pub dmc_fetched: Vec<(usize, u8)>,
}

impl TestBus {
    pub(crate) fn new() -> TestBus {
        TestBus {
            memory: vec![0; 0x10000],
            log: Vec::new(),
            nmi_asserted: Vec::new(),
            irq_asserted: Vec::new(),
            oam_page: None,
            oam_started_at: Vec::new(),
            dmc_requests: Vec::new(),
            dmc_fetched: Vec::new(),
        }
    }

    /// A bus holding `program` at `origin`.
    pub(crate) fn with_program(origin: u16, program: &[u8]) -> TestBus {
        let mut bus = TestBus::new();
        bus.load(origin, program);
        bus
    }

    pub(crate) fn load(&mut self, origin: u16, bytes: &[u8]) {
        for (offset, &byte) in bytes.iter().enumerate() {
            self.memory[(usize::from(origin) + offset) & 0xFFFF] = byte;
        }
    }

    pub(crate) fn set_vector(&mut self, vector: u16, target: u16) {
        let [low, high] = target.to_le_bytes();
        self.memory[usize::from(vector)] = low;
        self.memory[usize::from(vector) + 1] = high;
    }

    fn active_dmc(&self) -> Option<&DmcRequest> {
        let now = self.log.len();
        self.dmc_requests
            .iter()
            .find(|r| r.from <= now && !matches!(r.withdraw_at, Some(end) if now >= end))
    }
}

impl Bus for TestBus {
    fn read(&mut self, addr: u16) -> u8 {
        let value = self.memory[usize::from(addr)];
        self.log.push(Access::Read(addr, value));
        value
    }

    fn write(&mut self, addr: u16, value: u8) {
        self.memory[usize::from(addr)] = value;
        self.log.push(Access::Write(addr, value));
        if addr == 0x4014 {
            self.oam_page = Some(value);
        }
    }

    fn nmi_line(&self) -> bool {
        let now = self.log.len();
        self.nmi_asserted.iter().any(|r| r.contains(&now))
    }

    fn irq_line(&self) -> bool {
        let now = self.log.len();
        self.irq_asserted.iter().any(|r| r.contains(&now))
    }

    fn dma_requested(&self) -> bool {
        self.oam_page.is_some() || self.active_dmc().is_some()
    }

    fn oam_dma_page(&self) -> Option<u8> {
        self.oam_page
    }

    fn oam_dma_started(&mut self) {
        self.oam_page = None;
        self.oam_started_at.push(self.log.len());
    }

    fn dmc_dma_address(&self) -> Option<u16> {
        self.active_dmc().map(|r| r.address)
    }

    fn dmc_dma_complete(&mut self, value: u8) {
        let now = self.log.len();
        self.dmc_fetched.push((now, value));
        // The request is satisfied: drop it.
        let address = self.active_dmc().map(|r| r.address);
        self.dmc_requests
            .retain(|r| !(Some(r.address) == address && r.from <= now));
    }
}

/// A CPU ready to run at `pc` with the usual post-reset stack pointer and I clear, its cycle
/// counter at 0 (a DMA get cycle).
pub(crate) fn cpu_at(pc: u16) -> Cpu {
    let mut cpu = Cpu::new();
    cpu.pc = pc;
    cpu.s = 0xFD;
    cpu.p = Status::U;
    cpu
}

pub(crate) use Access::{Read as R, Write as W};
