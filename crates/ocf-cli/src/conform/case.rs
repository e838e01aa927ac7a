//! A conformance case: one YAML file naming a call, its packs, its input and what it must give.

use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    /// What the case checks, for the failure report.
    #[serde(default)]
    pub description: Option<String>,
    /// The engine call: `formula`, `loadRuleset`, later `computeSheet`, `listOptions`, …
    pub call: String,
    /// Pack sources in load order: folders relative to the case file, or inline sources as mappings.
    #[serde(default)]
    pub packs: Vec<Value>,
    /// The call's input, the ruleset aside.
    #[serde(default)]
    pub input: Value,
    /// A subset of the output.
    #[serde(default)]
    pub expect: Option<Value>,
    /// The errors, in order, each a code or an object whose keys are compared as a subset.
    #[serde(default)]
    pub expect_error: Option<Vec<Value>>,
    /// Lists of the output that must hold some elements, by JSON pointer (`/effects`): each given
    /// element matches (as a subset) a distinct element of the list, in the same order, others
    /// between them allowed. For long lists (every effect of a sheet) a case is about a few of.
    #[serde(default)]
    pub expect_includes: Option<serde_json::Map<String, Value>>,
}

impl Case {
    pub fn read(path: &Path) -> Result<Case, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        let case: Case = serde_yaml::from_str(&text).map_err(|e| format!("not a case: {e}"))?;
        match (&case.expect, &case.expect_error) {
            (Some(_), Some(_)) => Err("a case gives `expect` or `expectError`, not both".into()),
            (None, None) => Err("a case gives `expect` or `expectError`".into()),
            (None, Some(_)) if case.expect_includes.is_some() => {
                Err("`expectIncludes` goes with `expect`, not `expectError`".into())
            }
            _ => Ok(case),
        }
    }

    /// The expected errors with a bare code written out as `{ code }`.
    pub fn expected_errors(&self) -> Option<Value> {
        let errors = self.expect_error.as_ref()?;
        let errors = errors
            .iter()
            .map(|e| match e {
                Value::String(code) => serde_json::json!({ "code": code }),
                other => other.clone(),
            })
            .collect();
        Some(Value::Array(errors))
    }
}
