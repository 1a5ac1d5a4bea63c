//! Files the emulator writes: screenshots, audio, and the atomic write they all go through.

use std::io::{BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum OutputError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot encode {path}: {message}")]
    Encode { path: String, message: String },
}

fn io_error(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A file written so that `path` holds either its old content or the complete new one, never
/// a half-written file: the data goes to a temporary file in the same directory, which
/// [`AtomicFile::commit`] flushes to disk and renames over `path` (atomic on POSIX file
/// systems). Dropped without a commit, the temporary file is deleted and `path` is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    temp: BufWriter<tempfile::NamedTempFile>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> Result<AtomicFile, OutputError> {
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io_error(path, e))?;
        Ok(AtomicFile {
            path: path.to_owned(),
            temp: BufWriter::new(temp),
        })
    }

    /// The file this will become.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn commit(self) -> Result<(), OutputError> {
        let path = self.path;
        let temp = self
            .temp
            .into_inner()
            .map_err(|e| io_error(&path, e.into_error()))?;
        // Temporary files are created private (0600); what we write is ordinary output that
        // other users and web servers may read, like any file the user creates.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| io_error(&path, e))?;
        }
        temp.as_file().sync_all().map_err(|e| io_error(&path, e))?;
        temp.persist(&path).map_err(|e| io_error(&path, e.error))?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.temp.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.temp.flush()
    }
}

/// Write `bytes` to `path` atomically (see [`AtomicFile`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes).map_err(|e| io_error(path, e))?;
    file.commit()
}

/// Encode an RGBA image as PNG.
pub fn encode_png(rgba: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgba).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Save an RGBA image as a PNG file, atomically.
pub fn save_png(path: &Path, rgba: &[u8], width: u32, height: u32) -> Result<(), OutputError> {
    let bytes = encode_png(rgba, width, height).map_err(|message| OutputError::Encode {
        path: path.display().to_string(),
        message,
    })?;
    write_atomically(path, &bytes)
}

/// Save mono samples (-1.0..1.0) as a 16-bit PCM WAV file, atomically.
pub fn save_wav(path: &Path, samples: &[f32], sample_rate: u32) -> Result<(), OutputError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let encode_error = |e: hound::Error| OutputError::Encode {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let mut cursor = Cursor::new(Vec::new());
    {
        let mut writer = hound::WavWriter::new(&mut cursor, spec).map_err(encode_error)?;
        for &sample in samples {
            let pcm = (sample.clamp(-1.0, 1.0) * f32::from(i16::MAX)) as i16;
            writer.write_sample(pcm).map_err(encode_error)?;
        }
        writer.finalize().map_err(encode_error)?;
    }
    write_atomically(path, &cursor.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomically(&path, b"first version, longer").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let entries = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries, 1, "no temporary file may be left behind");
    }

    #[cfg(unix)]
    #[test]
    fn written_files_are_readable_by_others() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shot.png");
        write_atomically(&path, b"picture").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }

    #[test]
    fn uncommitted_atomic_file_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.bin");
        std::fs::write(&path, b"old").unwrap();
        {
            let mut file = AtomicFile::create(&path).unwrap();
            file.write_all(b"partial").unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn atomic_write_into_missing_directory_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/out.bin");
        let err = write_atomically(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("cannot write"), "{err}");
        assert!(!path.exists());
    }

    #[test]
    fn png_round_trips() {
        let rgba: Vec<u8> = (0..4 * 3 * 2).map(|i| i as u8).collect();
        let bytes = encode_png(&rgba, 3, 2).unwrap();
        let decoder = png::Decoder::new(Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(&buf[..info.buffer_size()], &rgba[..]);
    }

    #[test]
    fn wav_has_the_samples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.wav");
        save_wav(&path, &[0.0, 0.5, -1.0, 2.0], 44_100).unwrap();
        let mut reader = hound::WavReader::open(&path).unwrap();
        assert_eq!(reader.spec().sample_rate, 44_100);
        let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
        assert_eq!(samples, [0, 16383, -32767, 32767]);
    }
}
