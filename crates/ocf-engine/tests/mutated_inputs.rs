//! The sample packs and characters, damaged as a new user's mistakes and an attacker's files would
//! damage them (lines deleted, doubled and swapped, scalars of the wrong type, random formula text,
//! random bytes), go through the build, loadRuleset and computeSheet; each input gets a result or
//! errors that all have a code, never a panic and never a hang.
//!
//! Every input runs on its own thread under a watchdog: one that has not finished after
//! [`DEADLINE`] fails the test as a hang (the deadline detects loops, it does not measure speed:
//! a debug build of the 5E pack takes well under a second).
//!
//! CI runs a fixed, seeded set. More on demand:
//! `OCF_FUZZ_CASES=2000 OCF_FUZZ_SEED=7 cargo test -p ocf-engine --test mutated_inputs` (the count
//! is per kind, packs and characters; the seed picks the mutations; a failure names the seed and
//! case that reproduce it).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use std::{fs, thread};

use ocf_load::build::{BuildOptions, build_report};
use ocf_load::{LoadOptions, load_ruleset};
use ocf_model::{Character, Ruleset};
use serde_json::{Map, Value};

/// How long one input may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(60);
/// Cases per kind when `OCF_FUZZ_CASES` is not set: a CI run stays well under a minute in a debug
/// build on two cores.
const CI_CASES: u64 = 12;
const CI_SEED: u64 = 0x0cf_f022;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// splitmix64: a small seeded generator, so a case is reproduced from its seed alone.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Scalars of every type, for a value of the wrong one.
const SCALARS: &[&str] = &[
    "null",
    "~",
    "[]",
    "{}",
    "-1",
    "0",
    "1.5",
    "1e308",
    "99999999999999999999999",
    "true",
    "'x'",
    "\"\"",
    "[1, [2, {a: b}]]",
    "{ id: null }",
    "*nope",
    "&a x",
    "!!binary aGk=",
];

/// Pieces of formula text, put together at random.
const FORMULA_PIECES: &[&str] = &[
    "1",
    "0",
    "-",
    "+",
    "*",
    "/",
    "%",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    ":",
    "?",
    "'",
    "\"",
    "&&",
    "||",
    "!",
    "==",
    "<=",
    "d",
    "20",
    "d6",
    "kh",
    "!!",
    "level",
    "self",
    "item",
    "character",
    "floor(",
    "max(",
    "min(",
    "sum(",
    "has(",
    "countCopies(",
    "copy",
    "fields",
    "x",
    " ",
    "9223372036854775807",
    "1.000001",
    "null",
    "true",
    "in",
    "=>",
];

fn random_formula(rng: &mut Rng) -> String {
    let len = 1 + rng.below(12);
    (0..len).map(|_| *rng.pick(FORMULA_PIECES)).collect()
}

/// One damage done to a file's bytes.
fn mutate(text: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let as_text = String::from_utf8_lossy(text).into_owned();
    let mut lines: Vec<String> = as_text.lines().map(str::to_owned).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = rng.below(n);
    let joined = |lines: &[String]| (lines.join("\n") + "\n").into_bytes();
    match rng.below(7) {
        0 => {
            lines.remove(i);
            (joined(&lines), format!("deleted line {}", i + 1))
        }
        1 => {
            let line = lines[i].clone();
            lines.insert(i, line);
            (joined(&lines), format!("doubled line {}", i + 1))
        }
        2 => {
            let j = rng.below(n);
            lines.swap(i, j);
            (
                joined(&lines),
                format!("swapped lines {} and {}", i + 1, j + 1),
            )
        }
        3 | 4 => {
            // A value (after the first `: `) replaced: by a scalar of another type, or by random
            // formula text, quoted so it stays a string.
            let with_value: Vec<usize> = (0..n).filter(|&k| lines[k].contains(": ")).collect();
            let k = *rng.pick(&with_value.first().map_or(vec![i], |_| with_value.clone()));
            let line = &lines[k];
            let at = line.find(": ").map_or(line.len(), |p| p + 2);
            let value = if rng.below(2) == 0 {
                rng.pick(SCALARS).to_string()
            } else {
                format!("'{}'", random_formula(rng).replace('\'', "''"))
            };
            let what = format!("line {} value -> {value}", k + 1);
            lines[k] = format!("{}{value}", &line[..at]);
            (joined(&lines), what)
        }
        5 => {
            // A formula written where a formula is: a quoted value's text replaced.
            let quoted: Vec<usize> = (0..n).filter(|&k| lines[k].contains('\'')).collect();
            let k = *rng.pick(&quoted.first().map_or(vec![i], |_| quoted.clone()));
            let formula = random_formula(rng).replace('\'', "''");
            let line = &lines[k];
            let replaced = match (line.find('\''), line.rfind('\'')) {
                (Some(a), Some(b)) if b > a => {
                    format!("{}'{formula}'{}", &line[..a], &line[b + 1..])
                }
                _ => format!("{line} '{formula}'"),
            };
            lines[k] = replaced;
            (
                joined(&lines),
                format!("line {} formula -> {formula}", k + 1),
            )
        }
        _ => {
            // Random bytes, some not UTF-8, over a few places of the file.
            let mut bytes = text.to_vec();
            let count = 1 + rng.below(8);
            for _ in 0..count {
                let byte = (rng.next() & 0xff) as u8;
                let at = rng.below(bytes.len() + 1);
                if at < bytes.len() && rng.below(2) == 0 {
                    bytes[at] = byte;
                } else {
                    bytes.insert(at, byte);
                }
            }
            (bytes, format!("{count} random bytes"))
        }
    }
}

/// Runs `f` on its own thread; a panic or a run past the deadline fails the test, naming `case`.
fn watched<T: Send + 'static>(case: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(case.to_owned())
        .spawn(move || {
            let _ = send.send(f());
        })
        .expect("a thread");
    match receive.recv_timeout(DEADLINE) {
        Ok(value) => {
            let _ = handle.join();
            value
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{case}: no result after {DEADLINE:?} (a hang?)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let panic = handle.join().err();
            let message = panic
                .as_ref()
                .and_then(|p| {
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                })
                .unwrap_or_default();
            panic!("{case}: panicked: {message}")
        }
    }
}

/// A pack folder's files, by path inside it.
fn files_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((
                    path.strip_prefix(dir).unwrap().to_owned(),
                    fs::read(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// What is wrong with a computeSheet output: an `error` that is not a code, an `errors` entry
/// without one.
fn uncoded(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{at}/{key}");
                match (key.as_str(), value) {
                    ("error", Value::String(code)) if !code.is_empty() => {}
                    ("error", Value::Object(e)) if e.get("code").is_some_and(is_code) => {}
                    ("error", Value::Null) => {}
                    ("error", other) => out.push(format!("{here}: {other}")),
                    ("errors", Value::Array(errors)) => {
                        for (i, e) in errors.iter().enumerate() {
                            if !e.get("code").is_some_and(is_code) {
                                out.push(format!("{here}/{i}: {e}"));
                            }
                        }
                    }
                    _ => {}
                }
                uncoded(value, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                uncoded(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn is_code(value: &Value) -> bool {
    value.as_str().is_some_and(|c| !c.is_empty())
}

/// How far an input got, counted to show what a run exercised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Outcome {
    /// The build's problems, each with a code.
    BuildErrors,
    /// The character file did not read (not UTF-8, not a character, past a read limit): one
    /// problem with its code and place, as `ocf check` reports it.
    CharacterUnread,
    /// A sheet, its errors coded.
    Sheet,
}

/// computeSheet for `character_text`, or its read error: a result, or a coded error.
fn sheet_or_error(ruleset: &Ruleset, character_text: &[u8], case: &str) -> Outcome {
    let read = ocf_load::character::read_character(
        character_text.to_vec(),
        "character.yaml",
        ocf_load::character::Format::Yaml,
        &ocf_load::build::ReadLimits::default(),
    );
    let character: Character = match read {
        Ok(file) => file.character,
        Err(problem) => {
            assert!(
                !problem.code.is_empty(),
                "{case}: uncoded read error: {problem:?}"
            );
            return Outcome::CharacterUnread;
        }
    };
    let sheet = ocf_engine::compute_sheet_call(ruleset, &character, &[], &Map::new());
    let mut problems = Vec::new();
    uncoded(&sheet, "", &mut problems);
    assert!(problems.is_empty(), "{case}: uncoded errors: {problems:?}");
    assert!(sheet.get("values").is_some(), "{case}: no sheet: {sheet}");
    Outcome::Sheet
}

/// Prints how many inputs ended how (`--nocapture` shows it).
fn tally(outcomes: &[Outcome]) {
    let mut counts = std::collections::BTreeMap::new();
    for outcome in outcomes {
        *counts.entry(*outcome).or_insert(0) += 1;
    }
    eprintln!("{} inputs: {counts:?}", outcomes.len());
}

/// Builds `dir`; when it builds, loads it; when it loads, computes `character`'s sheet.
fn pack_case(dir: &Path, character: &[u8], case: &str) -> Outcome {
    let report = build_report(dir, &BuildOptions::default());
    for problem in &report.problems {
        assert!(
            !problem.code.is_empty(),
            "{case}: a problem without a code: {problem:?}"
        );
    }
    let Some(release) = report.release else {
        return Outcome::BuildErrors;
    };
    // `ocf check` and `ocf load` agree: what builds (with nothing left unchecked) loads.
    let ruleset = match load_ruleset(std::slice::from_ref(&release), &LoadOptions::default()) {
        Ok(ruleset) => ruleset,
        Err(errors) => panic!("{case}: builds with no errors, but does not load: {errors:?}"),
    };
    sheet_or_error(&ruleset, character, case)
}

struct Sample {
    pack: &'static str,
    character: &'static str,
}

const SAMPLES: &[Sample] = &[
    Sample {
        pack: "5e-srd-5.1",
        character: "fighter-5.yaml",
    },
    Sample {
        pack: "fitd-scoundrel",
        character: "scoundrel-cutter.yaml",
    },
    Sample {
        pack: "5e-srd-5.1",
        character: "wizard-3-prone.yaml",
    },
];

#[test]
fn mutated_packs_build_load_and_compute_or_give_coded_errors() {
    let cases = env_number("OCF_FUZZ_CASES", CI_CASES);
    let seed = env_number("OCF_FUZZ_SEED", CI_SEED);
    let scratch = std::env::temp_dir().join(format!("ocf-mutated-packs-{}", std::process::id()));
    let mut outcomes = Vec::new();
    for n in 0..cases {
        let mut rng = Rng(seed ^ n.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let sample = rng.pick(SAMPLES);
        let files = files_of(&root().join("packs").join(sample.pack));
        let character = fs::read(root().join("characters").join(sample.character)).unwrap();
        let target = rng.below(files.len());
        let (name, text) = &files[target];
        let mut text = text.clone();
        let mut what = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let (next, did) = mutate(&text, &mut rng);
            text = next;
            what.push(did);
        }
        let case = format!(
            "seed {seed} case {n}: {}/{}: {}",
            sample.pack,
            name.display(),
            what.join(", ")
        );
        let dir = scratch.join(n.to_string());
        let _ = fs::remove_dir_all(&dir);
        for (i, (file, bytes)) in files.iter().enumerate() {
            let path = dir.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, if i == target { &text } else { bytes }).unwrap();
        }
        let run_dir = dir.clone();
        let run_case = case.clone();
        outcomes.push(watched(&case, move || {
            pack_case(&run_dir, &character, &run_case)
        }));
        let _ = fs::remove_dir_all(&dir);
    }
    let _ = fs::remove_dir_all(&scratch);
    tally(&outcomes);
}

#[test]
fn mutated_characters_compute_or_give_coded_errors() {
    let cases = env_number("OCF_FUZZ_CASES", CI_CASES);
    let seed = env_number("OCF_FUZZ_SEED", CI_SEED);
    // One ruleset per pack, loaded once: the characters are what is damaged here.
    let rulesets: Vec<(&str, std::sync::Arc<Ruleset>)> = ["5e-srd-5.1", "fitd-scoundrel"]
        .into_iter()
        .map(|pack| {
            let dir = root().join("packs").join(pack);
            let release = ocf_load::build::build_pack(&dir, &BuildOptions::default()).unwrap();
            let ruleset = load_ruleset(&[release], &LoadOptions::default()).unwrap();
            (pack, std::sync::Arc::new(ruleset))
        })
        .collect();
    let mut characters: Vec<(String, Vec<u8>)> = fs::read_dir(root().join("characters"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    characters.sort();
    let mut outcomes = Vec::new();
    for n in 0..cases {
        let mut rng = Rng(!seed ^ n.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let (name, text) = rng.pick(&characters);
        let pack = if String::from_utf8_lossy(text).contains("fitd-scoundrel") {
            "fitd-scoundrel"
        } else {
            "5e-srd-5.1"
        };
        let ruleset = rulesets.iter().find(|(p, _)| *p == pack).unwrap().1.clone();
        let mut text = text.clone();
        let mut what = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let (next, did) = mutate(&text, &mut rng);
            text = next;
            what.push(did);
        }
        let case = format!("seed {seed} case {n}: {name}: {}", what.join(", "));
        let run_case = case.clone();
        outcomes.push(watched(&case, move || {
            sheet_or_error(&ruleset, &text, &run_case)
        }));
    }
    tally(&outcomes);
}
