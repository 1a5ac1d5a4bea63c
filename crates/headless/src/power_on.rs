//! `--power-on` and `--power-on-ram`, shared by `nes run`, `nes play` and `nes sweep`: how the
//! console starts (see `nes::Timeline` and `nes::PowerOnRam`).

use std::time::{SystemTime, UNIX_EPOCH};

use nes::{PowerOn, PowerOnRam, Timeline};

/// The `--power-on` values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TimelineChoice {
    /// A real console (NES-001): what the test ROMs measure.
    Hardware,
    /// FCEUX 2.6.5's start-up: two inactive frames after power-on and every reset, so
    /// FCEUX movies and scripts see the same frames.
    Fceux,
}

impl From<TimelineChoice> for Timeline {
    fn from(choice: TimelineChoice) -> Timeline {
        match choice {
            TimelineChoice::Hardware => Timeline::Hardware,
            TimelineChoice::Fceux => Timeline::Fceux,
        }
    }
}

/// How the console starts.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PowerOnArgs {
    /// The start-up timeline: `hardware` (a real console, what the test ROMs measure) or
    /// `fceux` (FCEUX 2.6.5's: the PPU inactive for two frames after power-on and every
    /// reset, so frame N and FM2 line N-1 are FCEUX's). Default: `fceux` for FCEUX material
    /// (a movie, a Lua script, a recording), else `hardware`.
    #[arg(long, value_enum, value_name = "hardware|fceux")]
    pub power_on: Option<TimelineChoice>,
    /// CPU RAM at power-on and at power cycles: `zero`, `ones` ($FF), `fceux` (FCEUX's default
    /// pattern: 4 bytes $00, 4 bytes $FF, repeated) or `random[:SEED]` (FCEUX's seeded random
    /// fill, SEED 0-4294967295; without a seed one is picked and printed). Default: `fceux` on
    /// FCEUX's timeline, else `zero`.
    #[arg(long, value_name = "zero|ones|fceux|random[:SEED]", value_parser = parse_power_on_ram)]
    pub power_on_ram: Option<PowerOnRam>,
}

impl PowerOnArgs {
    /// What these options ask for; `fceux_material` picks the default timeline.
    pub fn resolve(&self, fceux_material: bool) -> PowerOn {
        let timeline = self.timeline(fceux_material);
        PowerOn {
            timeline,
            ram: self.power_on_ram.unwrap_or(default_ram(timeline)),
        }
    }

    /// The timeline asked for, or the default for this kind of run.
    pub fn timeline(&self, fceux_material: bool) -> Timeline {
        match self.power_on {
            Some(choice) => choice.into(),
            None if fceux_material => Timeline::Fceux,
            None => Timeline::Hardware,
        }
    }
}

/// A [`PowerOn`] as sweep workers receive it and `sweep.json` records it: the timeline, and
/// the RAM fill as FCEUX's `RAMInitOption` and `RAMInitSeed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PowerOnRecord {
    pub timeline: TimelineChoice,
    pub ram_init_option: u32,
    pub ram_init_seed: u32,
}

impl Default for PowerOnRecord {
    fn default() -> PowerOnRecord {
        PowerOnRecord::from(PowerOn::HARDWARE)
    }
}

impl From<PowerOn> for PowerOnRecord {
    fn from(power_on: PowerOn) -> PowerOnRecord {
        let (ram_init_option, ram_init_seed) = power_on.ram.fceux_option();
        PowerOnRecord {
            timeline: match power_on.timeline {
                Timeline::Hardware => TimelineChoice::Hardware,
                Timeline::Fceux => TimelineChoice::Fceux,
            },
            ram_init_option,
            ram_init_seed,
        }
    }
}

impl From<PowerOnRecord> for PowerOn {
    fn from(record: PowerOnRecord) -> PowerOn {
        PowerOn {
            timeline: record.timeline.into(),
            ram: PowerOnRam::from_fceux_option(record.ram_init_option, record.ram_init_seed),
        }
    }
}

/// The RAM fill that goes with a timeline when none is asked for.
pub fn default_ram(timeline: Timeline) -> PowerOnRam {
    match timeline {
        Timeline::Hardware => PowerOnRam::Zeroed,
        Timeline::Fceux => PowerOnRam::FceuxPattern,
    }
}

/// Parses a `--power-on-ram` value; a bare `random` picks a seed from the clock and says so
/// on stderr (so the run can be repeated).
pub fn parse_power_on_ram(text: &str) -> Result<PowerOnRam, String> {
    match text.split_once(':') {
        None => match text {
            "zero" => Ok(PowerOnRam::Zeroed),
            "ones" => Ok(PowerOnRam::Ones),
            "fceux" => Ok(PowerOnRam::FceuxPattern),
            "random" => {
                let seed = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|since| since.subsec_nanos() ^ since.as_secs() as u32)
                    .unwrap_or(0);
                eprintln!("power-on RAM: random, seed {seed} (--power-on-ram random:{seed})");
                Ok(PowerOnRam::Random { seed })
            }
            _ => Err(expected()),
        },
        Some(("random", seed)) => seed
            .parse()
            .map(|seed| PowerOnRam::Random { seed })
            .map_err(|_| format!("the seed must be a number from 0 to {}", u32::MAX)),
        Some(_) => Err(expected()),
    }
}

fn expected() -> String {
    "expected `zero`, `ones`, `fceux`, `random` or `random:SEED`".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_values_parse() {
        assert_eq!(parse_power_on_ram("zero"), Ok(PowerOnRam::Zeroed));
        assert_eq!(parse_power_on_ram("ones"), Ok(PowerOnRam::Ones));
        assert_eq!(parse_power_on_ram("fceux"), Ok(PowerOnRam::FceuxPattern));
        assert_eq!(
            parse_power_on_ram("random:4294967295"),
            Ok(PowerOnRam::Random { seed: u32::MAX })
        );
        assert!(matches!(
            parse_power_on_ram("random"),
            Ok(PowerOnRam::Random { .. })
        ));
        for bad in [
            "",
            "Zero",
            "random:",
            "random:-1",
            "random:4294967296",
            "pattern:3",
        ] {
            assert!(parse_power_on_ram(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn records_round_trip() {
        for power_on in [
            PowerOn::HARDWARE,
            PowerOn::FCEUX,
            PowerOn {
                timeline: Timeline::Fceux,
                ram: PowerOnRam::Random { seed: 77 },
            },
        ] {
            assert_eq!(PowerOn::from(PowerOnRecord::from(power_on)), power_on);
        }
    }

    #[test]
    fn defaults_follow_the_kind_of_run() {
        let none = PowerOnArgs::default();
        assert_eq!(none.resolve(false), PowerOn::HARDWARE);
        assert_eq!(none.resolve(true), PowerOn::FCEUX);
        let hardware = PowerOnArgs {
            power_on: Some(TimelineChoice::Hardware),
            power_on_ram: None,
        };
        assert_eq!(hardware.resolve(true), PowerOn::HARDWARE);
        let fceux_zeroed = PowerOnArgs {
            power_on: Some(TimelineChoice::Fceux),
            power_on_ram: Some(PowerOnRam::Zeroed),
        };
        assert_eq!(
            fceux_zeroed.resolve(false),
            PowerOn {
                timeline: Timeline::Fceux,
                ram: PowerOnRam::Zeroed
            }
        );
    }
}
