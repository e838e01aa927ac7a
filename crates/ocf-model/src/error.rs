//! Reading a document into a type, with errors a pack author can act on: where (the file and the path
//! inside it, as a JSON pointer) and, for a misspelt key, the key that was probably meant.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_path_to_error::{Path, Segment};

use crate::suggest;

/// Why a document did not load, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The document, as the caller named it (a file path such as `content/items/x.yaml`).
    pub origin: String,
    /// A JSON pointer into the document (`/effects/0`), `` for the document itself.
    pub path: String,
    /// The 1-based line and column, when the parser knows them.
    pub location: Option<(usize, usize)>,
    pub kind: LoadErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// A key the format doesn't have, with the nearest one it has.
    UnknownKey {
        key: String,
        suggestion: Option<String>,
    },
    /// Anything else: a wrong type, a missing key, a value that isn't one of the allowed ones, a
    /// syntax error.
    Invalid(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        match &self.kind {
            LoadErrorKind::UnknownKey { key, suggestion } => {
                write!(f, "unknown key `{key}` at `{}: {path}`", self.origin)?;
                if let Some(suggestion) = suggestion {
                    write!(f, ", did you mean `{suggestion}`?")?;
                }
            }
            LoadErrorKind::Invalid(message) => write!(f, "{message} at `{}: {path}`", self.origin)?,
        }
        if let Some((line, column)) = self.location {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Reads a YAML document (a pack source file, a character file) into `T`.
pub fn from_yaml_str<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, LoadError> {
    // Most documents read: the path of an error is tracked only when there is one, by reading the
    // document again (tracking every key and index costs about a fifth of a read).
    if let Ok(value) = serde_yaml::from_str(text) {
        return Ok(value);
    }
    let deserializer = serde_yaml::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let location = error.inner().location().map(|l| (l.line(), l.column()));
        let message = strip_yaml_decorations(&error.inner().to_string(), location);
        LoadError::new(origin, pointer(error.path()), location, &message)
    })
}

/// Reads a JSON document (a pack release, a character file) into `T`.
pub fn from_json_str<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, LoadError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let inner = error.inner();
        let location = (inner.line() > 0).then(|| (inner.line(), inner.column()));
        let message = strip_location(&inner.to_string(), location);
        LoadError::new(origin, pointer(error.path()), location, &message)
    })?;
    deserializer.end().map_err(|error| {
        let location = Some((error.line(), error.column()));
        let message = strip_location(&error.to_string(), location);
        LoadError::new(origin, String::new(), location, &message)
    })?;
    Ok(value)
}

impl LoadError {
    fn new(
        origin: &str,
        mut path: String,
        location: Option<(usize, usize)>,
        message: &str,
    ) -> LoadError {
        let kind = match parse_unknown_field(message) {
            Some((key, expected)) => {
                let suggestion = suggest::nearest(&key, expected.iter().map(String::as_str));
                // The path tracker has already stepped into the unknown key; report the map that holds
                // it, where the author has to look.
                let segment = format!("/{}", escape(&key));
                if let Some(parent) = path.strip_suffix(&segment) {
                    path = parent.to_owned();
                }
                LoadErrorKind::UnknownKey {
                    suggestion: suggestion.map(str::to_owned),
                    key,
                }
            }
            None => LoadErrorKind::Invalid(message.to_owned()),
        };
        LoadError {
            origin: origin.to_owned(),
            path,
            location,
            kind,
        }
    }
}

/// The path as a JSON pointer (RFC 6901: `~` and `/` in keys escaped).
fn pointer(path: &Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        out.push('/');
        match segment {
            Segment::Seq { index } => out.push_str(&index.to_string()),
            Segment::Map { key } => out.push_str(&escape(key)),
            Segment::Enum { variant } => out.push_str(variant),
            Segment::Unknown => out.push('?'),
        }
    }
    out
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// serde_yaml writes its own path in front of the message (`effects[0]: …`) and the location after it;
/// we report both ourselves.
fn strip_yaml_decorations(message: &str, location: Option<(usize, usize)>) -> String {
    let message = strip_location(message, location);
    match message.split_once(": ") {
        // serde_yaml's path has no spaces or backticks (unless a key does); serde's messages and ours
        // start with words or a quoted key.
        Some((prefix, rest)) if !prefix.is_empty() && !prefix.contains([' ', '`']) => {
            rest.to_owned()
        }
        _ => message,
    }
}

fn strip_location(message: &str, location: Option<(usize, usize)>) -> String {
    match location {
        Some((line, column)) => message
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(message)
            .to_owned(),
        None => message.to_owned(),
    }
}

/// Reads serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or `b`", "expected
/// `a`", "there are no fields") into the key and the known keys.
fn parse_unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, expected) = rest.split_once('`')?;
    let known = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    Some((key.to_owned(), known))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_messages() {
        let cases = [
            (
                "unknown field `efects`, expected one of `id`, `effects`",
                Some(("efects", vec!["id", "effects"])),
            ),
            (
                "unknown field `x`, expected `a` or `b`",
                Some(("x", vec!["a", "b"])),
            ),
            (
                "unknown field `x`, expected `formula`",
                Some(("x", vec!["formula"])),
            ),
            (
                "unknown field `x`, there are no fields",
                Some(("x", vec![])),
            ),
            ("missing field `id`", None),
        ];
        for (message, expected) in cases {
            let expected = expected.map(|(k, v): (&str, Vec<&str>)| {
                (
                    k.to_owned(),
                    v.into_iter().map(str::to_owned).collect::<Vec<_>>(),
                )
            });
            assert_eq!(parse_unknown_field(message), expected, "{message}");
        }
    }
}
