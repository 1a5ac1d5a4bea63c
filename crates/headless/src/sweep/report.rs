//! What a sweep writes: the records of `sweep.json` and the `index.html` contact sheet.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::hardware::HardwareRecord;
use crate::power_on::PowerOnRecord;

use super::compare::CompareReport;
use super::job::RomJob;

/// How one ROM's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Ran every frame asked for.
    Ok,
    /// The file could not be read or is not a supported iNES / NES 2.0 image (or its input
    /// entries are malformed).
    LoadError,
    /// A frame did not complete within the cycle budget.
    Hang,
    /// The CPU executed a JAM/KIL opcode (`jam_pc` says where).
    Jam,
    /// The emulator panicked or its process died; `detail` has the message.
    Panic,
    /// A capture could not be written.
    OutputError,
}

impl Verdict {
    pub const ALL: [Verdict; 6] = [
        Verdict::Ok,
        Verdict::LoadError,
        Verdict::Hang,
        Verdict::Jam,
        Verdict::Panic,
        Verdict::OutputError,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::LoadError => "load error",
            Verdict::Hang => "hang",
            Verdict::Jam => "JAM",
            Verdict::Panic => "panic",
            Verdict::OutputError => "output error",
        }
    }

    fn css_class(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::LoadError => "load-error",
            Verdict::Hang => "hang",
            Verdict::Jam => "jam",
            Verdict::Panic => "panic",
            Verdict::OutputError => "output-error",
        }
    }
}

/// One captured frame. Paths are relative to the sweep's output folder, with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureRecord {
    pub frame: u64,
    pub png: String,
    pub raw9: String,
    /// SHA-256 of the raw9 file.
    pub sha256: String,
    /// False for the extra capture of the last picture of a run that stopped early.
    pub requested: bool,
}

/// One ROM's line in `sweep.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RomRecord {
    /// Path relative to the ROM folder or list, `/` separators.
    pub rom: String,
    /// MD5 of the whole file (absent when it could not be read).
    pub md5: Option<String>,
    pub mapper: Option<u16>,
    pub submapper: Option<u8>,
    pub board: Option<String>,
    /// The title, for cartridges the emulator recognises.
    pub title: Option<String>,
    /// Frames asked for.
    pub frames: u64,
    /// Frames completed.
    pub frames_run: u64,
    pub verdict: Verdict,
    /// Where the CPU jammed (`$C123`), for `jam`.
    pub jam_pc: Option<String>,
    /// Why the verdict is not `ok` (empty when it is).
    pub detail: String,
    /// The scripted input, in `--press` syntax.
    pub input: Vec<String>,
    pub captures: Vec<CaptureRecord>,
    /// Wall-clock time of the run.
    pub elapsed_ms: u64,
}

impl RomRecord {
    /// A record for `job` before it has run: every fact unknown, verdict `ok`.
    pub fn new(job: &RomJob, frames: u64) -> RomRecord {
        RomRecord {
            rom: job.key.clone(),
            md5: None,
            mapper: None,
            submapper: None,
            board: None,
            title: None,
            frames,
            frames_run: 0,
            verdict: Verdict::Ok,
            jam_pc: None,
            detail: String::new(),
            input: job.presses.clone(),
            captures: Vec::new(),
            elapsed_ms: 0,
        }
    }
}

/// `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// Format version of this file.
    pub schema_version: u32,
    /// The program that wrote it (`nes 0.1.0`).
    pub emulator: String,
    /// The `--roms` argument.
    pub roms_source: String,
    pub frames: u64,
    pub capture_frames: Vec<u64>,
    /// The palette the PNGs went through (`built-in NTSC` or a file).
    pub palette: String,
    pub jobs: usize,
    pub hang_cycles: u64,
    /// How the consoles started (sweeps written before this field: the hardware timeline).
    #[serde(default)]
    pub power_on: PowerOnRecord,
    /// Which console the ROMs ran on (sweeps written before this field: the reference one).
    #[serde(default)]
    pub hardware: HardwareRecord,
    pub elapsed_seconds: f64,
    /// ROMs per verdict (keys as in `verdict`).
    pub counts: BTreeMap<Verdict, usize>,
    pub roms: Vec<RomRecord>,
    /// Present when the sweep ran with `--compare`.
    pub compare: Option<CompareReport>,
}

pub const SCHEMA_VERSION: u32 = 1;

/// ROMs per verdict.
pub fn count_verdicts(records: &[RomRecord]) -> BTreeMap<Verdict, usize> {
    let mut counts = BTreeMap::new();
    for record in records {
        *counts.entry(record.verdict).or_insert(0) += 1;
    }
    counts
}

/// `ok 140, JAM 2, ...` for the verdicts that occur.
pub fn counts_line(counts: &BTreeMap<Verdict, usize>) -> String {
    Verdict::ALL
        .iter()
        .filter_map(|verdict| {
            counts
                .get(verdict)
                .filter(|&&count| count > 0)
                .map(|count| format!("{} {count}", verdict.label()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Escape text for HTML content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// Escape a relative path for an `href`/`src`: each segment percent-encoded where a browser
/// would otherwise misread it (spaces, `#`, `?`, `%`, quotes, non-ASCII).
pub fn url_path(path: &str) -> String {
    let mut url = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                url.push(char::from(byte));
            }
            other => {
                let _ = write!(url, "%{other:02X}");
            }
        }
    }
    url
}

const STYLE: &str = r#"
:root { color-scheme: dark; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #15171c; color: #e4e6eb; }
header { padding: 16px 24px; background: #1f232b; border-bottom: 1px solid #333a46;
  position: sticky; top: 0; z-index: 1; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 24px 8px; }
.meta { color: #a0a7b4; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600;
  font-size: 12px; }
.ok { background: #1f6f3f; color: #e8fff0; }
.load-error { background: #7a5a10; color: #fff6dd; }
.hang { background: #7a3f10; color: #fff0e0; }
.jam { background: #8a1f2a; color: #ffe8ea; }
.panic { background: #b0102a; color: #fff; }
.output-error { background: #5a2a7a; color: #f6eaff; }
.changed { background: #b0207a; color: #fff; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(290px, 1fr)); gap: 16px;
  padding: 0 24px 24px; }
.grid.changes { grid-template-columns: repeat(auto-fill, minmax(min(100%, 830px), 1fr)); }
.card { background: #1f232b; border: 1px solid #333a46; border-radius: 8px; padding: 10px; }
.card.bad { border-color: #8a1f2a; }
.card.diff { border-color: #b0207a; }
.name { font-weight: 600; word-break: break-all; margin-bottom: 4px; }
.facts { color: #a0a7b4; font-size: 12px; margin-bottom: 6px; }
.detail { font-size: 12px; color: #ffb4bc; margin: 4px 0; word-break: break-word; }
figure { margin: 6px 0 0; }
figure img { width: 256px; height: 240px; image-rendering: pixelated; display: block;
  background: #000; border: 1px solid #333a46; }
figcaption { font: 11px/1.3 ui-monospace, monospace; color: #a0a7b4; word-break: break-all; }
table { border-collapse: collapse; margin: 0 24px 16px; }
td, th { border: 1px solid #333a46; padding: 4px 8px; text-align: left; vertical-align: top; }
.pair { display: flex; gap: 6px; flex-wrap: wrap; }
.pair img { width: 256px; height: 240px; image-rendering: pixelated; }
a { color: #8ab4ff; }
"#;

/// How `index.html` links to pictures outside the output folder (the `--compare` folder).
#[derive(Debug, Clone)]
pub struct HtmlContext {
    /// The old output folder as seen from the new one (`../old-sweep/`), with a trailing `/`.
    pub old_prefix: Option<String>,
}

/// The contact sheet: a summary, the changes found by `--compare`, then one card per ROM with
/// its verdict, facts and captures (relative links, so the folder can be moved or served).
pub fn render_html(report: &SweepReport, context: &HtmlContext) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Screenshot sweep: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape_html(&report.roms_source)
    );
    let _ = write!(
        html,
        "<header><h1>Screenshot sweep: {} ROMs</h1><div class=\"meta\">{} &middot; \
         {} frames, captures at {} &middot; palette {} &middot; {:.1} s on {} jobs &middot; \
         {}</div><div>",
        report.roms.len(),
        escape_html(&report.roms_source),
        report.frames,
        escape_html(&frame_list(&report.capture_frames)),
        escape_html(&report.palette),
        report.elapsed_seconds,
        report.jobs,
        escape_html(&report.emulator),
    );
    for verdict in Verdict::ALL {
        if let Some(count) = report.counts.get(&verdict).filter(|&&count| count > 0) {
            let _ = write!(
                html,
                "<span class=\"badge {}\">{} {count}</span> ",
                verdict.css_class(),
                verdict.label()
            );
        }
    }
    if let Some(compare) = &report.compare {
        let class = if compare.changed.is_empty() && compare.missing.is_empty() {
            "ok"
        } else {
            "changed"
        };
        let _ = write!(
            html,
            "<span class=\"badge {class}\">vs {}: {} changed, {} missing, {} unchanged</span>",
            escape_html(&compare.old_dir),
            compare.changed.len(),
            compare.missing.len(),
            compare.unchanged
        );
    }
    html.push_str("</div></header>\n");
    if let Some(compare) = &report.compare {
        render_changes(&mut html, compare, context);
    }
    let changed: Vec<(&str, u64)> = report
        .compare
        .iter()
        .flat_map(|compare| &compare.changed)
        .map(|change| (change.rom.as_str(), change.frame))
        .collect();
    let _ = writeln!(html, "<h2>ROMs</h2>\n<div class=\"grid\">");
    for record in &report.roms {
        render_card(&mut html, record, &changed);
    }
    html.push_str("</div>\n</body>\n</html>\n");
    html
}

fn frame_list(frames: &[u64]) -> String {
    if frames.is_empty() {
        return "the last frame".to_owned();
    }
    frames
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn render_changes(html: &mut String, compare: &CompareReport, context: &HtmlContext) {
    let _ = writeln!(
        html,
        "<h2>Changes against {}</h2>",
        escape_html(&compare.old_dir)
    );
    if compare.changed.is_empty() && compare.missing.is_empty() && compare.verdicts.is_empty() {
        html.push_str("<p style=\"margin: 0 24px\">No capture changed.</p>\n");
        return;
    }
    if !compare.verdicts.is_empty() {
        html.push_str("<table><tr><th>ROM</th><th>old verdict</th><th>new verdict</th></tr>\n");
        for change in &compare.verdicts {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape_html(&change.rom),
                change.old.label(),
                change.new.label()
            );
        }
        html.push_str("</table>\n");
    }
    if !compare.missing.is_empty() {
        html.push_str("<table><tr><th>ROM</th><th>frame</th><th>capture only in</th></tr>\n");
        for missing in &compare.missing {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape_html(&missing.rom),
                missing.frame,
                if missing.only_in_old { "old" } else { "new" }
            );
        }
        html.push_str("</table>\n");
    }
    html.push_str("<div class=\"grid changes\">\n");
    for change in &compare.changed {
        let _ = write!(
            html,
            "<div class=\"card diff\"><div class=\"name\">{} <span class=\"badge changed\">\
             f{}</span></div><div class=\"facts\">{} pixels changed{}</div><div class=\"pair\">",
            escape_html(&change.rom),
            change.frame,
            change.changed_pixels,
            change
                .changed_area
                .map(|[left, top, right, bottom]| format!(" in x {left}-{right}, y {top}-{bottom}"))
                .unwrap_or_default()
        );
        if let Some(prefix) = &context.old_prefix {
            picture(html, &format!("{prefix}{}", change.old_png), "old");
        }
        picture(html, &change.new_png, "new");
        if let Some(diff) = &change.diff_png {
            picture(html, diff, "changed pixels");
        }
        if let Some(error) = &change.error {
            let _ = write!(html, "<div class=\"detail\">{}</div>", escape_html(error));
        }
        html.push_str("</div></div>\n");
    }
    html.push_str("</div>\n");
}

fn picture(html: &mut String, src: &str, caption: &str) {
    let url = url_path(src);
    let _ = write!(
        html,
        "<figure><a href=\"{url}\"><img src=\"{url}\" alt=\"{caption}\" loading=\"lazy\"></a>\
         <figcaption>{caption}</figcaption></figure>",
        caption = escape_html(caption)
    );
}

fn render_card(html: &mut String, record: &RomRecord, changed: &[(&str, u64)]) {
    let bad = record.verdict != Verdict::Ok;
    let any_change = changed.iter().any(|(rom, _)| *rom == record.rom);
    let class = match (bad, any_change) {
        (_, true) => "card diff",
        (true, false) => "card bad",
        (false, false) => "card",
    };
    let _ = write!(
        html,
        "<div class=\"{class}\" id=\"{}\"><div class=\"name\">{} \
         <span class=\"badge {}\">{}</span></div><div class=\"facts\">",
        escape_html(&record.rom),
        escape_html(&record.rom),
        record.verdict.css_class(),
        record.verdict.label(),
    );
    if let Some(title) = &record.title {
        let _ = write!(html, "{} &middot; ", escape_html(title));
    }
    if let (Some(mapper), Some(board)) = (record.mapper, &record.board) {
        let _ = write!(html, "mapper {mapper} ({}) &middot; ", escape_html(board));
    }
    let _ = write!(
        html,
        "{}/{} frames &middot; {} ms",
        record.frames_run, record.frames, record.elapsed_ms
    );
    if let Some(md5) = &record.md5 {
        let _ = write!(html, "<br>md5 {}", escape_html(md5));
    }
    if !record.input.is_empty() {
        let _ = write!(html, "<br>input {}", escape_html(&record.input.join(" ")));
    }
    html.push_str("</div>");
    if !record.detail.is_empty() {
        let _ = write!(
            html,
            "<div class=\"detail\">{}</div>",
            escape_html(&record.detail)
        );
    }
    for capture in &record.captures {
        let url = url_path(&capture.png);
        let mark = if changed.contains(&(record.rom.as_str(), capture.frame)) {
            " <span class=\"badge changed\">changed</span>"
        } else {
            ""
        };
        let kind = if capture.requested {
            ""
        } else {
            " (last picture)"
        };
        let _ = write!(
            html,
            "<figure><a href=\"{url}\"><img src=\"{url}\" alt=\"frame {frame}\" loading=\"lazy\">\
             </a><figcaption>f{frame}{kind}{mark}<br><span title=\"SHA-256 of {raw}\">{sha}\
             </span></figcaption></figure>",
            frame = capture.frame,
            raw = escape_html(&capture.raw9),
            sha = escape_html(&capture.sha256),
        );
    }
    html.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escaping_and_urls() {
        assert_eq!(
            escape_html("<a href=\"x\">Tom & Jerry's</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
        assert_eq!(
            url_path("captures/Super Mario #1/x_f1.png"),
            "captures/Super%20Mario%20%231/x_f1.png"
        );
        assert_eq!(url_path("é"), "%C3%A9");
    }

    #[test]
    fn verdicts_serialise_in_kebab_case_and_count() {
        assert_eq!(
            serde_json::to_string(&Verdict::LoadError).unwrap(),
            "\"load-error\""
        );
        let job = RomJob {
            key: "a.nes".into(),
            path: "a.nes".into(),
            presses: Vec::new(),
        };
        let mut jam = RomRecord::new(&job, 10);
        jam.verdict = Verdict::Jam;
        let records = [RomRecord::new(&job, 10), jam.clone(), jam];
        let counts = count_verdicts(&records);
        assert_eq!(counts_line(&counts), "ok 1, JAM 2");
        let json = serde_json::to_string(&counts).unwrap();
        assert_eq!(json, r#"{"ok":1,"jam":2}"#);
    }

    #[test]
    fn html_lists_every_rom_with_verdict_and_captures() {
        let job = RomJob {
            key: "dir/<odd> name.nes".into(),
            path: "x".into(),
            presses: vec!["10:S".into()],
        };
        let mut record = RomRecord::new(&job, 60);
        record.frames_run = 60;
        record.captures.push(CaptureRecord {
            frame: 60,
            png: "captures/dir/<odd> name_f60.png".into(),
            raw9: "captures/dir/<odd> name_f60.raw9".into(),
            sha256: "ab".repeat(32),
            requested: true,
        });
        let mut broken = RomRecord::new(&job, 60);
        broken.rom = "broken.nes".into();
        broken.verdict = Verdict::LoadError;
        broken.detail = "not an iNES image".into();
        let records = vec![record, broken];
        let report = SweepReport {
            schema_version: SCHEMA_VERSION,
            emulator: "nes test".into(),
            roms_source: "roms/".into(),
            frames: 60,
            capture_frames: vec![],
            palette: "built-in NTSC".into(),
            jobs: 2,
            hang_cycles: 1,
            power_on: Default::default(),
            hardware: Default::default(),
            elapsed_seconds: 1.5,
            counts: count_verdicts(&records),
            roms: records,
            compare: None,
        };
        let html = render_html(&report, &HtmlContext { old_prefix: None });
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("src=\"captures/dir/%3Codd%3E%20name_f60.png\""));
        assert!(html.contains("dir/&lt;odd&gt; name.nes"));
        assert!(!html.contains("<odd>"), "names are escaped");
        assert!(html.contains("badge load-error\">load error</span>"));
        assert!(html.contains("not an iNES image"));
        assert!(html.contains(&"ab".repeat(32)));
        assert!(html.contains("input 10:S"));
        assert!(html.trim_end().ends_with("</html>"));
    }
}
