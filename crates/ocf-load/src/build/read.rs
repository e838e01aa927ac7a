//! Reading one YAML source document into its type: first the position index (which refuses
//! malformed YAML, deep nesting and alias bombs), then ocf-model's typed reading, whose errors carry
//! the path and the nearest known key.

use ocf_model::{LoadError, LoadErrorKind, from_yaml_str};
use serde::de::DeserializeOwned;

use super::limits::ReadLimits;
use super::locations::{IndexError, Locations};
use super::problem::{Position, Problem};

/// A document read into `T`, with its positions.
pub struct Document<T> {
    pub value: T,
    pub locations: Locations,
}

pub fn document<T: DeserializeOwned>(
    text: &str,
    file: &str,
    limits: &ReadLimits,
) -> Result<Document<T>, Box<Problem>> {
    let locations = Locations::index(text, limits)
        .map_err(|error| match error {
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
        })
        .map_err(Box::new)?;
    // A file with no node (empty, or only comments) is an empty document: serde_yaml reads it as
    // null, which no type takes; an empty rules file or manifest is better reported by what it
    // lacks, an empty content file as an item without an `id` (as loadRuleset reports it).
    let text = if locations.has("") { text } else { "{}" };
    match from_yaml_str::<T>(text, file) {
        Ok(value) => Ok(Document { value, locations }),
        Err(error) => Err(Box::new(load_problem(error, file, &locations))),
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
