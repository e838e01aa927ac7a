//! The engine calls a conformance case can make, each taking the case's input as JSON.

use super::Outcome;
use super::case::Case;
use crate::output::error_body;
use ocf_formula::{Formula, MapContext};
use serde::Deserialize;
use std::path::Path;

/// Carries out the case's call. `Err` is a case that cannot run (unknown call, malformed input),
/// reported as a failure.
pub fn call(case: &Case, _dir: &Path) -> Result<Outcome, String> {
    match case.call.as_str() {
        "formula" => formula(&case.input),
        other => Err(format!("unknown call `{other}`")),
    }
}

/// `formula`: `{ formula, context? }` evaluated as `ocf formula eval` does; the output is the value.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormulaInput {
    formula: String,
    #[serde(default)]
    context: Option<serde_json::Value>,
}

fn formula(input: &serde_json::Value) -> Result<Outcome, String> {
    let input =
        FormulaInput::deserialize(input).map_err(|e| format!("bad `formula` input: {e}"))?;
    let context = match &input.context {
        Some(json) => MapContext::from_json(json).map_err(|e| format!("bad context: {e}"))?,
        None => MapContext::new(),
    };
    let formula = match Formula::parse(&input.formula) {
        Ok(formula) => formula,
        Err(errors) => return Ok(Outcome::Errors(errors.iter().map(error_body).collect())),
    };
    Ok(match formula.evaluate(&context) {
        Ok(value) => Outcome::Output(value.to_json()),
        Err(error) => Outcome::Errors(vec![error_body(&error)]),
    })
}
