//! A character file for the commands that take one (`ocf check`, `ocf sheet`, `ocf watch`): read
//! as the build reads a pack's files, its ruleset made from the packs given or its pins, and
//! checked as computeSheet checks it. Every problem is a build [`Problem`]: a code, the file, a
//! JSON pointer and, where the file has the node, its line and column.

use std::path::{Path, PathBuf};

use ocf_load::build::{BuildOptions, Problem, ReadLimits, build_report};
use ocf_load::character::{CharacterFile, read_character_file};
use ocf_model::{PackRelease, Ruleset};
use serde_json::Value;

/// Reads the character file at `path`.
pub fn read(path: &Path) -> Result<CharacterFile, Box<Problem>> {
    read_character_file(path, &ReadLimits::default())
}

/// Reads a data file a command takes beside a character (`ocf act`'s answers, a participant's list
/// of views) into `T`, within the character files' read limits (size, nesting, aliases) and
/// refusing a key written twice in any map, as a character's own maps do: a refusal is a
/// [`Problem`] with its code, pointer, line and column.
pub fn read_data<T>(path: &Path) -> Result<T, Box<Problem>>
where
    T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    use ocf_load::build::read::{document, json_document};
    use ocf_load::build::source::{check_size, decode, read_bounded};
    let limits = ReadLimits::default();
    let file = path.display().to_string();
    let bytes = read_bounded(path, &file, limits.max_file_bytes)?;
    check_size(&file, bytes.len() as u64, &limits, &mut 0)?;
    let text = decode(&file, bytes)?;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    Ok(if json {
        json_document::<Unique>(&text, &file, &limits)?;
        json_document::<T>(&text, &file, &limits)?.value
    } else {
        document::<Unique>(&text, &file, &limits)?;
        document::<T>(&text, &file, &limits)?.value
    })
}

/// Any YAML or JSON value whose maps have no key twice (serde_json's own `Value` keeps the last).
#[derive(Debug, PartialEq)]
struct Unique;

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_none<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Unique, D::Error> {
        serde::Deserialize::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key `{key}`"
                )));
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}

/// Writes `character` to `out` (YAML for `.yaml` / `.yml`, else JSON) through a temporary file
/// beside it, renamed over it once whole: a failed write leaves the old file as it was. `ocf
/// apply -o` and `ocf act --apply` write through this one path. `original` is the YAML file the
/// character was read from: its text is patched ([`crate::yaml_patch`]), keeping its comments.
pub fn write(
    out: &Path,
    character: &ocf_model::Character,
    original: Option<&Path>,
) -> Result<(), String> {
    write_text(out, &text(out, character, original)?)
}

/// The text [`write`] writes: for a YAML `out` with a YAML `original`, the original's text
/// patched to say `character` (written whole, with a warning on stderr, should the patch not
/// read back as the character); else the character written whole.
pub fn text(
    out: &Path,
    character: &ocf_model::Character,
    original: Option<&Path>,
) -> Result<String, String> {
    let yaml = |p: &Path| p.extension().is_some_and(|e| e == "yaml" || e == "yml");
    if !yaml(out) {
        return Ok(serde_json::to_string_pretty(character).map_err(|e| e.to_string())? + "\n");
    }
    if let Some(original) = original.filter(|p| yaml(p)) {
        let limits = ReadLimits::default();
        let file = original.display().to_string();
        let read = ocf_load::build::source::read_bounded(original, &file, limits.max_file_bytes)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if let Some(written) = read {
            match crate::yaml_patch::patched(&written, character) {
                Ok(text) => return Ok(text),
                Err(why) => eprintln!(
                    "ocf: {}: written whole, its comments not kept ({why})",
                    out.display()
                ),
            }
        }
    }
    serde_yaml::to_string(character).map_err(|e| e.to_string())
}

/// Writes `text` to `out` through a temporary file beside it, renamed over it once whole.
pub fn write_text(out: &Path, text: &str) -> Result<(), String> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = out.with_file_name(format!(".{name}.ocf-tmp"));
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", out.display());
    std::fs::write(&tmp, text).map_err(cannot)?;
    std::fs::rename(&tmp, out).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot(e)
    })
}

/// The character's ruleset: the packs given (folders or release `.json` files, in load order),
/// else each pinned pack's `testdata/packs/<id>` folder found above the file or the current
/// directory. A pin not found is `missing-dependency` at the pin; a pack that doesn't build or
/// read gives its problems; a ruleset that doesn't load, its load errors.
pub fn ruleset(
    path: &Path,
    file: &CharacterFile,
    packs: &[PathBuf],
) -> Result<Ruleset, Vec<Problem>> {
    let origin = path.display().to_string();
    let folders: Vec<PathBuf> = if packs.is_empty() {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, pin) in file.character.packs.iter().enumerate() {
            // A pack pinned twice would be loaded twice, and loadRuleset's `duplicate-pack` has no
            // place in the file: it is said at the second pin instead.
            if !seen.insert(pin.id.as_str()) {
                let pointer = format!("/packs/{i}");
                missing.push(
                    Problem::error(
                        "duplicate-pack",
                        format!("pack `{}` is pinned twice", pin.id.as_str()),
                    )
                    .in_file(&origin)
                    .at(&pointer, file.position(&pointer))
                    .with("pack", pin.id.as_str()),
                );
                continue;
            }
            match find_pack(path, pin.id.as_str()) {
                Some(folder) => found.push(folder),
                None => {
                    let pointer = format!("/packs/{i}");
                    missing.push(
                        Problem::error(
                            "missing-dependency",
                            format!(
                                "the pinned pack `{}` is not found under testdata/packs/; pass \
                                 it with --pack",
                                pin.id.as_str()
                            ),
                        )
                        .in_file(&origin)
                        .at(&pointer, file.position(&pointer))
                        .with("pack", pin.id.as_str())
                        .with("version", pin.version.as_str()),
                    );
                }
            }
        }
        if !missing.is_empty() {
            return Err(missing);
        }
        found
    } else {
        packs.to_vec()
    };
    let mut releases = Vec::new();
    let mut problems = Vec::new();
    let mut loaded = None;
    for folder in &folders {
        match read_loaded_pack(folder) {
            Ok((release, ruleset)) => {
                releases.push(release);
                loaded = ruleset;
            }
            Err(more) => problems.extend(more),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // One folder: its build has made the very loadRuleset call below (the release alone, default
    // options) to check that the load agrees; it is not made twice.
    if let ([_], Some(ruleset)) = (releases.as_slice(), loaded) {
        return Ok(ruleset);
    }
    ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()).map_err(|errors| {
        errors
            .iter()
            .map(|e| {
                let mut problem = Problem::error(&e.code, &e.message).in_file(&origin);
                problem.pointer = e.path.clone().unwrap_or_default();
                problem.data = e.data.clone();
                problem
            })
            .collect()
    })
}

/// A pack: a source folder built (its problems with each file joined to the folder), or a release
/// JSON file read.
pub fn read_pack(path: &Path) -> Result<PackRelease, Vec<Problem>> {
    read_loaded_pack(path).map(|(release, _)| release)
}

/// [`read_pack`], with the ruleset of the release loaded alone when a folder's build loaded it.
fn read_loaded_pack(path: &Path) -> Result<(PackRelease, Option<Ruleset>), Vec<Problem>> {
    if path.is_dir() {
        let report = build_report(path, &BuildOptions::default());
        let loaded = report.loaded;
        return report.release.map(|r| (r, loaded)).ok_or_else(|| {
            report
                .problems
                .into_iter()
                .filter(Problem::is_error)
                .map(|mut p| {
                    p.file = joined(path, &p.file);
                    p
                })
                .collect()
        });
    }
    let origin = path.display().to_string();
    let text = ocf_load::source::read_release_text(path, &ReadLimits::default())
        .map_err(|problem| vec![*problem])?;
    let release = ocf_model::from_json_str(&text, &origin).map_err(|error| {
        let at = error
            .location
            .map(|(line, column)| ocf_load::build::Position { line, column });
        vec![
            Problem::error("invalid-document", error.to_string())
                .in_file(&origin)
                .at(&error.path, at),
        ]
    })?;
    Ok((release, None))
}

fn joined(dir: &Path, file: &str) -> String {
    if file.is_empty() {
        dir.display().to_string()
    } else {
        dir.join(file).display().to_string()
    }
}

fn find_pack(character: &Path, id: &str) -> Option<PathBuf> {
    let start = character
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let cwd = std::env::current_dir().ok();
    for base in start.iter().chain(cwd.iter()) {
        for dir in base.ancestors() {
            let candidate = dir.join("testdata").join("packs").join(id);
            if candidate.is_dir() {
                return Some(candidate);
            }
        }
    }
    None
}

/// computeSheet's `errors` for the character as problems in its file: each at its `path`, with its
/// line and column where the file writes that node (or its nearest written ancestor).
pub fn sheet_problems(path: &Path, file: &CharacterFile, sheet: &Value) -> Vec<Problem> {
    let origin = path.display().to_string();
    sheet["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|error| {
            let code = error["code"].as_str().unwrap_or("error");
            let data = error["data"].as_object().cloned().unwrap_or_default();
            let message = match error["message"].as_str() {
                Some(message) => message.to_owned(),
                None => Value::Object(data.clone()).to_string(),
            };
            let pointer = error["path"].as_str().unwrap_or_default();
            let mut problem = Problem::error(code, message)
                .in_file(&origin)
                .at(pointer, written(file, pointer));
            problem.data = data;
            problem
        })
        .collect()
}

/// Where the node at `pointer` is written. A saved value's path names the field by its qualified
/// ID (`/values/core:str`); the file may save it by its bare one (`str`).
fn written(file: &CharacterFile, pointer: &str) -> Option<ocf_load::build::Position> {
    if !file.locations.has(pointer)
        && let Some(field) = pointer.strip_prefix("/values/")
        && let Some((_, bare)) = field.split_once(':')
    {
        let bare = format!("/values/{bare}");
        if file.locations.has(&bare) {
            return file.position(&bare);
        }
    }
    file.position(pointer)
}

/// Every problem of the character file at `path`: its reading, its ruleset's, then computeSheet's
/// `errors`, in file order.
pub fn check(path: &Path, packs: &[PathBuf]) -> Vec<Problem> {
    let file = match read(path) {
        Ok(file) => file,
        Err(problem) => return vec![*problem],
    };
    let ruleset = match ruleset(path, &file, packs) {
        Ok(ruleset) => ruleset,
        Err(problems) => return problems,
    };
    let sheet = ocf_engine::compute_sheet_shared(
        std::sync::Arc::new(ruleset),
        &file.character,
        &[],
        &Default::default(),
    );
    let mut problems = sheet_problems(path, &file, &sheet);
    // File order, as the build's problems: by line, then column; unplaced ones first.
    problems.sort_by_key(|p| (p.line, p.column));
    problems
}
