//! Why an action failed: the spec's code, a message, the step's path and the code's `data`.

use serde_json::{Map, Value as Json, json};

#[derive(Debug, Clone, PartialEq)]
pub struct ActionError {
    pub code: &'static str,
    pub message: String,
    /// The full path of the step that failed (`attack`, `check/roll`), when a step did.
    pub step: Option<String>,
    pub data: Box<Map<String, Json>>,
}

impl ActionError {
    pub fn new(code: &'static str, message: impl Into<String>) -> ActionError {
        ActionError {
            code,
            message: message.into(),
            step: None,
            data: Box::default(),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Json>) -> ActionError {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Names the failing step, unless a nested one already did.
    pub fn at(mut self, step: &str) -> ActionError {
        if self.step.is_none() {
            self.step = Some(step.to_owned());
        }
        self
    }

    pub fn formula(error: &ocf_formula::FormulaError, formula: &str) -> ActionError {
        ActionError::new(error.code.as_str(), error.message.clone()).with("formula", formula)
    }

    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("code".into(), json!(self.code));
        m.insert("message".into(), json!(self.message));
        if let Some(step) = &self.step {
            m.insert("step".into(), json!(step));
        }
        if !self.data.is_empty() {
            m.insert("data".into(), Json::Object((*self.data).clone()));
        }
        Json::Object(m)
    }
}

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.step {
            Some(step) => write!(f, "{} at step `{step}`: {}", self.code, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}
