//! Reading one YAML source document into its type: first the position index (which refuses
//! malformed YAML, deep nesting and alias bombs), then ocf-model's typed reading, whose errors carry
//! the path and the nearest known key.

use ocf_model::{LoadError, LoadErrorKind, from_yaml_str};
use serde::de::DeserializeOwned;

use super::limits::ReadLimits;
use super::locations::{IndexError, Locations, escape};
use super::plain;
use super::problem::{Position, Problem};

/// A document read into `T`, with its positions.
pub struct Document<T> {
    pub value: T,
    pub locations: Locations,
}

pub fn document<T: DeserializeOwned + PartialEq + std::fmt::Debug>(
    text: &str,
    file: &str,
    limits: &ReadLimits,
) -> Result<Document<T>, Box<Problem>> {
    let text = without_bom(text);
    // The common document in one pass, its index made only if a position is asked for.
    if let Some(value) = plain::read::<T>(text, limits) {
        debug_assert_same(&value, text, file);
        return Ok(Document {
            value,
            locations: Locations::later(text, limits),
        });
    }
    let locations =
        Locations::index(text, limits).map_err(|error| Box::new(index_problem(error, file)))?;
    // A file with no node (empty, or only comments) is an empty document: serde_yaml reads it as
    // null, which no type takes; an empty rules file or manifest is better reported by what it
    // lacks, an empty content file as an item without an `id` (as loadRuleset reports it).
    let text = if locations.has("") { text } else { "{}" };
    match from_yaml_str::<T>(text, file) {
        Ok(value) => Ok(Document { value, locations }),
        Err(mut error) => {
            // A key written twice is placed at its second writing, not at its map.
            if let LoadErrorKind::Invalid(message) = &error.kind
                && let Some(key) = message
                    .strip_prefix("duplicate field `")
                    .or_else(|| message.strip_prefix("duplicate key `"))
                    .and_then(|rest| rest.split('`').next())
                && let Some(at) = second_key(text, &locations, &error.path, key)
            {
                error.location = Some((at.line, at.column));
                error.path = format!("{}/{}", error.path, escape(key));
            }
            Err(Box::new(load_problem(error, file, &locations)))
        }
    }
}

/// Where `key` is written the second time in the map at `pointer`: after its first writing, on
/// the same line (a flow map) or on a later line at the same column (a block map), before a line
/// indented less.
fn second_key(text: &str, locations: &Locations, pointer: &str, key: &str) -> Option<Position> {
    let first = locations.key(&format!("{pointer}/{}", escape(key)))?;
    let lines: Vec<&str> = text.lines().collect();
    let is_key_at = |line: &str, column: usize| {
        let rest: String = line.chars().skip(column.saturating_sub(1)).collect();
        let rest = rest.trim_start_matches(['"', '\'']);
        rest.strip_prefix(key).is_some_and(|after| {
            let after = after.trim_start_matches(['"', '\'']).trim_start();
            after.starts_with(':')
        })
    };
    // A flow map: later on the first key's line.
    let line = lines.get(first.line.checked_sub(1)?)?;
    let chars: Vec<char> = line.chars().collect();
    for column in first.column + key.chars().count()..chars.len() {
        let before = chars[column - 1];
        if (before == ' ' || before == ',' || before == '{') && is_key_at(line, column + 1) {
            return Some(Position {
                line: first.line,
                column: column + 1,
            });
        }
    }
    for (i, line) in lines.iter().enumerate().skip(first.line) {
        let indent = line.chars().take_while(|c| *c == ' ').count();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if indent + 1 < first.column {
            return None;
        }
        if is_key_at(line, first.column) {
            return Some(Position {
                line: i + 1,
                column: first.column,
            });
        }
    }
    None
}

/// Debug builds check that the one-pass reading gave what serde_yaml gives: every test and
/// conformance case that reads a pack or a character checks it.
fn debug_assert_same<T: DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
    text: &str,
    file: &str,
) {
    if cfg!(debug_assertions) {
        let theirs = from_yaml_str::<T>(text, file);
        assert_eq!(
            theirs.as_ref().ok(),
            Some(value),
            "{file}: the one-pass reading differs from serde_yaml's"
        );
    }
}

/// A JSON document read into `T`, with its positions: JSON is YAML, so the same index bounds its
/// nesting and gives its positions. Should the YAML parser refuse what serde_json reads (YAML is
/// stricter about tabs), the document is read without positions, serde_json's own nesting bound
/// (128) standing in for ours.
pub fn json_document<T: DeserializeOwned>(
    text: &str,
    file: &str,
    limits: &ReadLimits,
) -> Result<Document<T>, Box<Problem>> {
    let text = without_bom(text);
    let locations = match Locations::index(text, limits) {
        Ok(locations) => locations,
        Err(error @ IndexError::Limit { .. }) => return Err(Box::new(index_problem(error, file))),
        Err(IndexError::Syntax { .. }) => {
            if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
                return Err(Box::new(json_syntax_problem(&error, file, limits)));
            }
            Locations::default()
        }
    };
    match ocf_model::from_json_str::<T>(text, file) {
        Ok(value) => Ok(Document { value, locations }),
        Err(mut error) => {
            // serde_json places an error after the token it read; the index has where the node
            // (or the unknown key) starts, as serde_yaml gives it.
            let at = match &error.kind {
                LoadErrorKind::UnknownKey { key, .. } => {
                    let node = format!("{}/{}", error.path, escape(key));
                    locations.has(&node).then(|| locations.key(&node)).flatten()
                }
                LoadErrorKind::Invalid(_) => locations
                    .has(&error.path)
                    .then(|| locations.value(&error.path))
                    .flatten(),
            };
            if let Some(at) = at {
                error.location = Some((at.line, at.column));
            }
            Err(Box::new(load_problem(error, file, &locations)))
        }
    }
}

/// The text after a UTF-8 byte-order mark, which some editors write and neither parser expects
/// (serde_yaml would read it into the first key). Positions then count from after it, as an
/// editor that hides it shows them.
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// serde_json's refusal of a text that is not JSON: `invalid-json` at its position, or its nesting
/// bound as ours.
fn json_syntax_problem(error: &serde_json::Error, file: &str, limits: &ReadLimits) -> Problem {
    let at = (error.line() > 0).then(|| Position {
        line: error.line(),
        column: error.column(),
    });
    let message = error.to_string();
    if message.contains("recursion limit exceeded") {
        return Problem::error(
            "safety-limit-exceeded",
            format!("maps and lists nest more than {} deep", limits.max_nesting),
        )
        .in_file(file)
        .at("", at)
        .with("limit", "maxNesting");
    }
    let message = match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_owned(),
        None => message,
    };
    Problem::error("invalid-json", message)
        .in_file(file)
        .at("", at)
}

/// Why the position index refused a document, as a problem: `invalid-yaml` or
/// `safety-limit-exceeded` (with `data.limit`).
fn index_problem(error: IndexError, file: &str) -> Problem {
    match error {
        IndexError::Syntax { message, at } => Problem::error("invalid-yaml", message)
            .in_file(file)
            .at("", Some(at)),
        IndexError::Limit {
            limit,
            message,
            at,
            pointer,
        } => Problem::error("safety-limit-exceeded", message)
            .in_file(file)
            .at(&pointer, Some(at))
            .with("limit", limit),
    }
}

/// An ocf-model error as a problem: `unknown-key` (with the suggestion) or `invalid-document`, at the
/// parser's position or, without one, the pointer's.
fn load_problem(error: LoadError, file: &str, locations: &Locations) -> Problem {
    let at = error
        .location
        .map(|(line, column)| Position { line, column })
        .or_else(|| locations.value(&error.path));
    match error.kind {
        LoadErrorKind::UnknownKey { key, suggestion } => {
            let mut message = format!("unknown key `{key}`");
            if let Some(suggestion) = &suggestion {
                message.push_str(&format!(", did you mean `{suggestion}`?"));
            }
            let mut problem = Problem::error("unknown-key", message)
                .in_file(file)
                .at(&error.path, at)
                .with("key", key);
            if let Some(suggestion) = suggestion {
                problem = problem.with("suggestion", suggestion);
            }
            problem
        }
        LoadErrorKind::Invalid(message) => {
            // serde_yaml's own bounds, should ours let a document through.
            let code = if message.contains("recursion limit exceeded")
                || message.contains("repetition limit exceeded")
            {
                "safety-limit-exceeded"
            } else {
                "invalid-document"
            };
            Problem::error(code, message)
                .in_file(file)
                .at(&error.path, at)
        }
    }
}
