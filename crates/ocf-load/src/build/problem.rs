//! What the build reports: a problem with its code, where it is (the file, the line and column, and the
//! JSON pointer inside the file) and the data the spec names for its code.

use serde::Serialize;
use serde_json::{Map, Value};

/// Whether a problem stops the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    Error,
    /// Reported, but the release is still made.
    Warning,
}

/// One problem in a pack source folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub severity: Severity,
    /// The spec's code where one applies (`unknown-reference`, `formula-error`, ...), else ours
    /// (`invalid-document`, `unknown-key`, `duplicate-key`; decisions.md "The build").
    pub code: String,
    pub message: String,
    /// The file, relative to the pack folder, `/`-separated; empty when the problem is the folder's.
    pub file: String,
    /// 1-based, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based, in characters, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// A JSON pointer into the file's document (`/effects/0/value`); empty for the whole document.
    pub pointer: String,
    /// The code's data, as the spec names it (`cause`, `formula`, `tag`, `pack`, ...).
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub data: Map<String, Value>,
}

impl Problem {
    pub fn error(code: &str, message: impl Into<String>) -> Problem {
        Problem {
            severity: Severity::Error,
            code: code.to_owned(),
            message: message.into(),
            file: String::new(),
            line: None,
            column: None,
            pointer: String::new(),
            data: Map::new(),
        }
    }

    pub fn warning(code: &str, message: impl Into<String>) -> Problem {
        Problem {
            severity: Severity::Warning,
            ..Problem::error(code, message)
        }
    }

    pub fn in_file(mut self, file: &str) -> Problem {
        self.file = file.to_owned();
        self
    }

    pub fn at(mut self, pointer: &str, position: Option<Position>) -> Problem {
        self.pointer = pointer.to_owned();
        if let Some(position) = position {
            self.line = Some(position.line);
            self.column = Some(position.column);
        }
        self
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Problem {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `dir/file:line:col: code: message`, with `warning: ` before the code of a warning: the line a
    /// compiler would print.
    pub fn headline(&self, dir: &std::path::Path) -> String {
        let mut out = if self.file.is_empty() {
            dir.display().to_string()
        } else {
            dir.join(&self.file).display().to_string()
        };
        if let Some(line) = self.line {
            out.push_str(&format!(":{line}"));
            if let Some(column) = self.column {
                out.push_str(&format!(":{column}"));
            }
        }
        let severity = if self.is_error() { "" } else { "warning: " };
        out.push_str(&format!(": {severity}{}: {}", self.code, self.message));
        out
    }
}

/// A place in a source file: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}
