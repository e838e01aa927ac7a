//! What applyChanges returns (docs/spec/engine-interface.md, "applyChanges"): the new character,
//! the batch as applied (with the faces it rolled), `adjustments`, what each change did, the
//! follow-ups the batch triggered, and what a batch that is not strict skipped. A failed batch is
//! one error with the failing change's path; nothing of it is kept (atomicity).

use ocf_model::{Change, Character};
use serde::Serialize;
use serde_json::Value as Json;

/// A change that could not be applied: the spec's code, the change's path (`/changes/3/entry`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeError {
    pub code: String,
    pub path: String,
    pub message: String,
    /// Boxed: an error travels through every `?` of the batch, and most have no data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<Json>>,
}

impl ChangeError {
    pub fn new(code: &str, path: impl Into<String>, message: impl Into<String>) -> ChangeError {
        ChangeError {
            code: code.to_owned(),
            path: path.into(),
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Json) -> ChangeError {
        self.data = Some(Box::new(data));
        self
    }
}

impl std::fmt::Display for ChangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.path, self.code, self.message)
    }
}

impl std::error::Error for ChangeError {}

/// One `then` change of an incoming-change effect, as applied (EF: "reports each one in
/// `adjustments` as `{ entry, key, value, source }`"): `value` is the state value it wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Adjustment {
    pub entry: String,
    pub key: String,
    pub value: Json,
    pub source: Json,
}

/// A batch that applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// The new character file; the input is never changed.
    pub character: Character,
    /// The batch as applied: each adjust with every face it used in `faces`, so that applying it
    /// again without a dice function gives the same character.
    pub batch: Vec<Change>,
    pub adjustments: Vec<Adjustment>,
    /// What each change did, in batch order (what formulas read as `batch`).
    pub changes: Vec<Json>,
    /// The follow-ups the batch triggered, each also stored in the file's `followUps`.
    pub follow_ups: Vec<Json>,
    /// Not strict: what was skipped or clamped, each with its change's path.
    pub skipped: Vec<ChangeError>,
}

impl Applied {
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or_default()
    }
}
