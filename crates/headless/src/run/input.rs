//! Where a run's controller input comes from: nothing, an FM2 movie, or `--press` schedules.

use nes::Buttons;
use nes_movie::fm2::{Commands, Movie, MovieFrame};
use nes_movie::input_schedule::InputSchedule;

use super::RunInput;
use crate::{limits, Error};

/// The controller input of a run, frame by frame.
#[derive(Debug)]
pub enum InputSource {
    Released,
    Movie(Movie),
    Schedule(InputSchedule),
}

impl InputSource {
    pub fn from_args(input: &RunInput) -> Result<InputSource, Error> {
        if let Some(path) = &input.movie {
            let bytes = limits::read_limited(path, &limits::MOVIE)?;
            // Comments and file names in old movies may be in a legacy 8-bit encoding.
            let text = String::from_utf8_lossy(&bytes);
            let movie = Movie::parse(&text).map_err(|source| Error::Movie {
                path: path.clone(),
                source,
            })?;
            return Ok(InputSource::Movie(movie));
        }
        let mut schedule = InputSchedule::new();
        if let Some(path) = &input.input {
            let text = limits::read_text_limited(path, &limits::INPUT_SCHEDULE)?;
            schedule = InputSchedule::parse_file(&text).map_err(|source| Error::InputSchedule {
                path: path.clone(),
                source,
            })?;
        }
        for press in &input.press {
            schedule.push(*press);
        }
        Ok(if schedule.is_empty() {
            InputSource::Released
        } else {
            InputSource::Schedule(schedule)
        })
    }

    /// The input of frame `frame` (from 1): FM2 line `frame - 1`, or the scripted presses.
    /// `None` once a movie has no more lines.
    pub fn input_for(&self, frame: u64) -> Option<MovieFrame> {
        match self {
            InputSource::Released => Some(MovieFrame::default()),
            InputSource::Movie(movie) => usize::try_from(frame - 1)
                .ok()
                .and_then(|line| movie.frames.get(line))
                .copied(),
            InputSource::Schedule(schedule) => Some(MovieFrame {
                command: Commands::empty(),
                pads: [schedule.buttons_for_frame(frame), Buttons::empty()],
            }),
        }
    }

    /// Frames to run when --frames is not given: a movie's length, else 60.
    pub fn default_frames(&self) -> u64 {
        match self {
            InputSource::Movie(movie) => movie.frames.len() as u64,
            _ => 60,
        }
    }

    pub fn movie(&self) -> Option<&Movie> {
        match self {
            InputSource::Movie(movie) => Some(movie),
            _ => None,
        }
    }

    /// What a recording of this run says it was made from.
    pub fn origin(&self) -> &'static str {
        match self {
            InputSource::Released => "no input",
            InputSource::Movie(_) => "a movie",
            InputSource::Schedule(_) => "scripted input",
        }
    }
}
