//! Load errors as every call reports them: `{ code, message, path?, data }` (EC: "one error per load
//! error, with `data.cause` the load code ... `data.detail` that error's data, and `path`").

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One load error: the spec's code, a message for people, the document it is about (a JSON pointer,
/// `/packs/<pack>/rules`, `/packs/<pack>/content/<i>`), and exactly the data fields the chapter names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadErrorRecord {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default)]
    pub data: Map<String, Value>,
}

impl LoadErrorRecord {
    pub fn new(code: &str, message: impl Into<String>) -> LoadErrorRecord {
        LoadErrorRecord {
            code: code.to_owned(),
            message: message.into(),
            path: None,
            data: Map::new(),
        }
    }

    pub fn at(mut self, path: impl Into<String>) -> LoadErrorRecord {
        self.path = Some(path.into());
        self
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> LoadErrorRecord {
        self.data.insert(key.to_owned(), value.into());
        self
    }
}

/// The document path of a pack's rules.
pub fn rules_path(pack: &str) -> String {
    format!("/packs/{pack}/rules")
}

/// The document path of a pack's content item.
pub fn content_path(pack: &str, index: usize) -> String {
    format!("/packs/{pack}/content/{index}")
}
