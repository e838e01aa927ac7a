//! The JSON shapes the front ends print, shared by the CLI and the conformance runner.

use ocf_formula::FormulaError;
use serde_json::{Value, json};

/// `{"error": {"code": "...", "message": "...", "range": [start, end]}}`
pub fn error_json(error: &FormulaError) -> Value {
    json!({ "error": error_body(error) })
}

/// `{"code": "...", "message": "...", "range": [start, end]}`
pub fn error_body(error: &FormulaError) -> Value {
    json!({
        "code": error.code.as_str(),
        "message": error.message,
        "range": [u32::from(error.range.start()), u32::from(error.range.end())],
    })
}
