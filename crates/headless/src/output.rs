//! Files the emulator writes: screenshots, audio, and the one write path they all go through.
//!
//! Every file the app writes (screenshots, captures, WAV, RAM logs, recorded movies, save
//! states, battery saves, reports, settings) goes through [`AtomicFile`], which decides how to
//! write from what the path names:
//!
//! - a regular file, or nothing yet: the data goes to a temporary file beside it, renamed over it
//!   on commit, so the path holds the old content or the whole new one, never a torn file;
//! - a symbolic link (or a chain, dangling or not): the same, at the place it points to, so the
//!   link stays a link;
//! - an existing FIFO, device or socket, or a descriptor link such as `/dev/stdout`: written in
//!   place (no create, no truncate), since renaming over it would destroy it; write errors
//!   (`/dev/full`) are reported;
//! - a directory: refused.
//!
//! Temporary files are named `.<target name>.nes-tmp-<pid>-<random>` and locked while their
//! owner lives. A process killed before its commit leaves one behind; the next write into that
//! folder (once per process and folder) removes those whose owner is gone: see
//! [`remove_stale_temporaries`].

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum OutputError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {reason}")]
    Refused { path: String, reason: String },
    #[error("cannot encode {path}: {message}")]
    Encode { path: String, message: String },
}

fn io_error(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn refused(path: &Path, reason: impl Into<String>) -> OutputError {
    OutputError::Refused {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Links followed before giving up, as the kernel does (Linux's limit is 40).
const MAX_LINKS: usize = 40;

/// Marks our temporary files: `.<target name>` + this + `<pid>-<random>`.
const TEMP_MARK: &str = ".nes-tmp-";
/// Random characters at the end of a temporary file's name.
const TEMP_RANDOM_LEN: usize = 6;
/// The target's name in a temporary file's name is cut to this many characters, so the whole
/// name stays within the usual 255-byte limit.
const TEMP_LABEL_MAX_CHARS: usize = 100;
/// Mode of a new output file: ordinary output that other users and web servers may read, like
/// any file the user creates (temporary files start private, 0600).
#[cfg(unix)]
const NEW_FILE_MODE: u32 = 0o644;

/// Where the bytes for a path go.
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    /// A regular file (or none yet) at this path, after following links: replaced atomically.
    Replace(PathBuf),
    /// Something that must not be replaced: written in place through this path. `append` for
    /// a regular file behind a descriptor link (`/dev/stdout` redirected to a file), which is a
    /// stream the shell opened, not a file to overwrite from its start.
    InPlace { path: PathBuf, append: bool },
}

/// Whether `dir` is one of the kernel's folders of descriptor links (`/proc/self/fd`,
/// `/dev/fd`): their links name open files (`pipe:[1234]`), not paths to follow.
fn is_descriptor_folder(dir: &Path) -> bool {
    std::fs::canonicalize(dir).is_ok_and(|dir| dir.starts_with("/proc"))
}

/// Decide how `path` is written (see the module documentation).
fn destination(path: &Path) -> Result<Destination, OutputError> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            // Nothing there yet (perhaps the end of a dangling link): a new file.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Destination::Replace(current))
            }
            Err(error) => return Err(io_error(path, error)),
        };
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            let dir = match current.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if is_descriptor_folder(&dir) {
                let append = std::fs::metadata(&current).is_ok_and(|meta| meta.is_file());
                return Ok(Destination::InPlace {
                    path: current,
                    append,
                });
            }
            let target = std::fs::read_link(&current).map_err(|e| io_error(path, e))?;
            // A relative target is relative to the link's folder; an absolute one replaces it.
            current = dir.join(target);
        } else if file_type.is_dir() {
            return Err(refused(path, "it is a directory"));
        } else if file_type.is_file() {
            return Ok(Destination::Replace(current));
        } else {
            // A FIFO, a character or block device, a socket.
            return Ok(Destination::InPlace {
                path: current,
                append: false,
            });
        }
    }
    Err(refused(
        path,
        format!("more than {MAX_LINKS} symbolic links to follow"),
    ))
}

/// A file written so that its path holds either its old content or the complete new one, never
/// a half-written file (for paths that can be replaced: see the module documentation). The data
/// goes to a temporary file beside the target, which [`AtomicFile::commit`] flushes to disk
/// and renames over it (atomic on POSIX file systems). Dropped without a commit, the temporary
/// file is deleted and the target is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    /// As the caller named it (for messages).
    path: PathBuf,
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    Replace {
        target: PathBuf,
        temp: BufWriter<tempfile::NamedTempFile>,
        /// The mode the file gets: the replaced file's, else [`NEW_FILE_MODE`].
        #[cfg(unix)]
        mode: u32,
    },
    InPlace(BufWriter<File>),
}

impl AtomicFile {
    pub fn create(path: &Path) -> Result<AtomicFile, OutputError> {
        let sink = match destination(path)? {
            Destination::Replace(target) => {
                let dir = match target.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => parent,
                    _ => Path::new("."),
                };
                remove_stale_temporaries_once(dir);
                let label: String = target
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default()
                    .chars()
                    .take(TEMP_LABEL_MAX_CHARS)
                    .collect();
                let prefix = format!(".{label}{TEMP_MARK}{}-", std::process::id());
                let temp = tempfile::Builder::new()
                    .prefix(&prefix)
                    .rand_bytes(TEMP_RANDOM_LEN)
                    .tempfile_in(dir)
                    .map_err(|e| io_error(path, e))?;
                // Held until the file is closed (even by a kill): a cleaner in another process
                // (or PID namespace) that cannot take it knows the owner still lives.
                let _ = temp.as_file().try_lock();
                #[cfg(unix)]
                let mode = {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::metadata(&target)
                        .map_or(NEW_FILE_MODE, |meta| meta.permissions().mode() & 0o7777)
                };
                Sink::Replace {
                    target,
                    temp: BufWriter::new(temp),
                    #[cfg(unix)]
                    mode,
                }
            }
            Destination::InPlace {
                path: place,
                append,
            } => {
                // No create and no truncate: the thing exists and is not ours to reshape.
                let file = OpenOptions::new()
                    .write(true)
                    .append(append)
                    .open(&place)
                    .map_err(|e| io_error(path, e))?;
                Sink::InPlace(BufWriter::new(file))
            }
        };
        Ok(AtomicFile {
            path: path.to_owned(),
            sink,
        })
    }

    /// The file this will become, as the caller named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn commit(self) -> Result<(), OutputError> {
        let path = self.path;
        match self.sink {
            Sink::InPlace(writer) => {
                // The last buffered bytes are written here: `/dev/full` fails now at the latest.
                writer
                    .into_inner()
                    .map_err(|e| io_error(&path, e.into_error()))?;
                Ok(())
            }
            Sink::Replace {
                target,
                temp,
                #[cfg(unix)]
                mode,
            } => {
                let temp = temp
                    .into_inner()
                    .map_err(|e| io_error(&path, e.into_error()))?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    temp.as_file()
                        .set_permissions(std::fs::Permissions::from_mode(mode))
                        .map_err(|e| io_error(&path, e))?;
                }
                temp.as_file().sync_all().map_err(|e| io_error(&path, e))?;
                temp.persist(&target)
                    .map_err(|e| io_error(&path, e.error))?;
                // The rename itself reaches the disk with the folder's entry.
                if let Some(dir) = target.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                    if let Ok(dir) = File::open(dir) {
                        let _ = dir.sync_all();
                    }
                }
                Ok(())
            }
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sink {
            Sink::Replace { temp, .. } => temp.write(buf),
            Sink::InPlace(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Replace { temp, .. } => temp.flush(),
            Sink::InPlace(file) => file.flush(),
        }
    }
}

/// Write `bytes` to `path` atomically (see [`AtomicFile`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes).map_err(|e| io_error(path, e))?;
    file.commit()
}

/// The process id in `name` if it is one of our temporary files' names
/// (`.<label>.nes-tmp-<pid>-<6 letters or digits>`), else `None`.
fn temporary_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (label, owner) = rest.rsplit_once(TEMP_MARK)?;
    let (pid, random) = owner.split_once('-')?;
    let well_formed = !label.is_empty()
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && random.len() == TEMP_RANDOM_LEN
        && random.bytes().all(|b| b.is_ascii_alphanumeric());
    if well_formed {
        pid.parse().ok()
    } else {
        None
    }
}

/// Folders this process has already cleaned: each is scanned once (a sweep writes thousands of
/// captures into one folder).
static CLEANED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

fn remove_stale_temporaries_once(dir: &Path) {
    let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let first = CLEANED
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(key);
    if first {
        remove_stale_temporaries(dir);
    }
}

/// Remove the temporary files a killed writer left in `dir`: those named as ours whose process
/// is gone (no `/proc/<pid>`) and whose lock nobody holds (a live writer in another PID
/// namespace holds it). Anything else, and everything where `/proc` is not there to ask, is
/// left alone. Returns how many were removed.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    if !Path::new("/proc/self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temporary_owner) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if remove_if_abandoned(&entry.path()) {
            removed += 1;
        }
    }
    removed
}

/// Remove `path` if it is a regular file nobody holds the lock of (checked on the file that is
/// removed, not one swapped in since).
fn remove_if_abandoned(path: &Path) -> bool {
    let Ok(before) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !before.file_type().is_file() {
        return false;
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    if file.try_lock().is_err() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let same = file
            .metadata()
            .is_ok_and(|opened| opened.dev() == before.dev() && opened.ino() == before.ino());
        if !same {
            return false;
        }
    }
    std::fs::remove_file(path).is_ok()
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

    /// A path's entries, sorted, for "nothing else was left here" checks.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_updated() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.png");
        std::fs::write(&real, b"old").unwrap();
        // A chain of two links, the first relative.
        let middle = dir.path().join("middle.png");
        std::os::unix::fs::symlink(&real, &middle).unwrap();
        let link = dir.path().join("link.png");
        std::os::unix::fs::symlink("middle.png", &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::symlink_metadata(&middle)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["link.png", "middle.png", "real.png"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_gets_its_file_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("saves")).unwrap();
        let link = dir.path().join("game.sav");
        std::os::unix::fs::symlink("saves/game.sav", &link).unwrap();
        write_atomically(&link, b"progress").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read(dir.path().join("saves/game.sav")).unwrap(),
            b"progress"
        );
        assert_eq!(names(&dir.path().join("saves")), ["game.sav"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let err = write_atomically(&a, b"x").unwrap_err();
        assert!(err.to_string().contains("symbolic links"), "{err}");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomically(dir.path(), b"x").unwrap_err();
        assert!(err.to_string().ends_with("it is a directory"), "{err}");
        assert!(dir.path().is_dir());
        assert!(names(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_through_not_replaced() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("audio.wav");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|status| status.success()) {
            eprintln!("SKIPPED: mkfifo is not available here");
            return;
        }
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            File::open(&reader_path)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        });
        write_atomically(&fifo, b"streamed samples").unwrap();
        assert_eq!(reader.join().unwrap(), b"streamed samples");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(names(dir.path()), ["audio.wav"]);
    }

    /// A character device node like /dev/full (1, 7) in a temporary folder; `None` (and a
    /// loud note) where this user may not make device nodes.
    #[cfg(unix)]
    fn dev_full_node(dir: &Path) -> Option<PathBuf> {
        let node = dir.join("full");
        let made = std::process::Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "7"])
            .stderr(std::process::Stdio::null())
            .status();
        if made.is_ok_and(|status| status.success()) {
            Some(node)
        } else {
            eprintln!("SKIPPED: mknod is not permitted here (needs root)");
            None
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_full_device_reports_the_error_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let Some(node) = dev_full_node(dir.path()) else {
            return;
        };
        let err = write_atomically(&node, &[0x55; 100]).unwrap_err();
        assert!(err.to_string().contains("No space left"), "{err}");
        let kind = std::fs::symlink_metadata(&node).unwrap().file_type();
        assert!(kind.is_char_device(), "the device node was replaced");
        assert_eq!(names(dir.path()), ["full"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private.sav");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomically(&path, b"new").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn temporary_files_carry_our_name_and_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ram.log");
        let file = AtomicFile::create(&path).unwrap();
        let names = names(dir.path());
        assert_eq!(names.len(), 1);
        let prefix = format!(".ram.log.nes-tmp-{}-", std::process::id());
        assert!(names[0].starts_with(&prefix), "{}", names[0]);
        assert_eq!(temporary_owner(&names[0]), Some(std::process::id()));
        drop(file);
    }

    #[test]
    fn only_our_exact_temporary_names_are_recognised() {
        assert_eq!(temporary_owner(".a.wav.nes-tmp-42-aB3xY9"), Some(42));
        assert_eq!(temporary_owner(".x.nes-tmp-1.nes-tmp-7-000000"), Some(7));
        for other in [
            "a.wav.nes-tmp-42-aB3xY9",   // not hidden
            "..nes-tmp-42-aB3xY9",       // no target name
            ".a.wav.nes-tmp--aB3xY9",    // no pid
            ".a.wav.nes-tmp-4x2-aB3xY9", // pid not a number
            ".a.wav.nes-tmp-42-aB3xY",   // random part too short
            ".a.wav.nes-tmp-42-aB3xY9z", // too long
            ".a.wav.nes-tmp-42-aB3-Y9",  // not alphanumeric
            ".a.wav.tmp4Xy2Zq",          // tempfile's default naming
            ".bashrc",
        ] {
            assert_eq!(temporary_owner(other), None, "{other}");
        }
    }

    /// A process id that is not running: a child that has exited and been reaped.
    #[cfg(target_os = "linux")]
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
        pid
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn stale_temporaries_of_dead_writers_are_removed_at_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let stale = format!(".ram.log.nes-tmp-{}-Ab12Cd", dead_pid());
        // Process 1 always lives: its file is in use.
        let live = ".ram.log.nes-tmp-1-Ab12Cd".to_owned();
        let mine = format!(".x.png.nes-tmp-{}-Zz9Zz9", std::process::id());
        let unrelated = [
            ".ram.log.tmpAb12Cd",
            ".hidden",
            "ram.log.nes-tmp-99999999-Ab12Cd",
        ];
        for name in [&stale, &live, &mine]
            .into_iter()
            .chain(&unrelated.map(String::from))
        {
            std::fs::write(dir.path().join(name), b"partial").unwrap();
        }
        write_atomically(&dir.path().join("shot.png"), b"picture").unwrap();
        let left = names(dir.path());
        assert!(!left.contains(&stale), "{left:?}");
        for kept in [&live, &mine] {
            assert!(left.contains(kept), "{kept} was removed: {left:?}");
        }
        for kept in unrelated {
            assert!(left.iter().any(|name| name == kept), "{kept} was removed");
        }
        assert!(left.iter().any(|name| name == "shot.png"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_locked_temporary_is_kept_even_when_its_pid_looks_dead() {
        // A writer in another PID namespace: its pid means nothing here, its lock does.
        let dir = tempfile::tempdir().unwrap();
        let name = format!(".ram.log.nes-tmp-{}-Ab12Cd", dead_pid());
        let held = File::create(dir.path().join(&name)).unwrap();
        held.lock().unwrap();
        assert_eq!(remove_stale_temporaries(dir.path()), 0);
        assert!(dir.path().join(&name).exists());
        drop(held);
        assert_eq!(remove_stale_temporaries(dir.path()), 1);
        assert!(!dir.path().join(&name).exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_symlink_named_like_a_temporary_is_not_followed_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let name = format!(".x.nes-tmp-{}-Ab12Cd", dead_pid());
        std::os::unix::fs::symlink(&victim, dir.path().join(&name)).unwrap();
        assert_eq!(remove_stale_temporaries(dir.path()), 0);
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(dir.path().join(&name)).is_ok());
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
